//! Where the provider's objects live: one JSON file per object in a
//! directory, named by its id. Tests read and edit the files to look at
//! what was made and to make drift.

use serde_json::Value as Json;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

impl Store {
    pub fn open(dir: &Path) -> Result<Store, String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot use {} as the store: {e}", dir.display()))?;
        Ok(Store {
            dir: dir.to_path_buf(),
        })
    }

    /// A store in `dir`, made only when its first object is: the rules'
    /// store inside the objects' is then no surprise to tests that look
    /// through the objects' folder.
    pub fn lazy(dir: &Path) -> Store {
        Store {
            dir: dir.to_path_buf(),
        }
    }

    /// The directory the store keeps its files in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    /// Stores a new object under the first free id `NAME-N`: named after
    /// the object, so objects made at once get the same ids in every run.
    /// The file appears whole (written aside, then linked into place, which
    /// fails when the id is taken), so a concurrent read never sees half.
    pub fn create(
        &self,
        name: &str,
        mut object: impl FnMut(&str) -> Json,
    ) -> Result<String, String> {
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| format!("cannot use {} as the store: {e}", self.dir.display()))?;
        for n in 1.. {
            let id = format!("{name}-{n}");
            if self.path(&id).exists() {
                continue;
            }
            let aside = self.aside(&id);
            std::fs::write(&aside, object(&id).to_string())
                .map_err(|e| format!("writing {id}: {e}"))?;
            let linked = std::fs::hard_link(&aside, self.path(&id));
            let _ = std::fs::remove_file(&aside);
            match linked {
                Ok(()) => return Ok(id),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(format!("creating {id}: {e}")),
            }
        }
        Err("no free id".into())
    }

    /// A temporary file beside the objects, never listed as one.
    fn aside(&self, id: &str) -> PathBuf {
        self.dir.join(format!(".{id}.{}.tmp", std::process::id()))
    }

    pub fn read(&self, id: &str) -> Result<Option<Json>, String> {
        match std::fs::read_to_string(self.path(id)) {
            Ok(text) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| format!("object {id} is damaged: {e}")),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("reading {id}: {e}")),
        }
    }

    /// Replaces an existing object; `false` when it is gone.
    pub fn write(&self, id: &str, object: &Json) -> Result<bool, String> {
        if !self.path(id).exists() {
            return Ok(false);
        }
        let aside = self.aside(id);
        std::fs::write(&aside, object.to_string())
            .and_then(|()| std::fs::rename(&aside, self.path(id)))
            .map(|()| true)
            .map_err(|e| format!("writing {id}: {e}"))
    }

    pub fn delete(&self, id: &str) -> Result<(), String> {
        match std::fs::remove_file(self.path(id)) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(format!("deleting {id}: {e}")),
        }
    }

    /// Every stored object, in id order.
    pub fn all(&self) -> Result<Vec<Json>, String> {
        let mut ids: Vec<String> = std::fs::read_dir(&self.dir)
            .map_err(|e| format!("listing the store: {e}"))?
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.strip_suffix(".json")
                    .filter(|_| !name.starts_with('.'))
                    .map(str::to_string)
            })
            .collect();
        ids.sort();
        let mut all = Vec::new();
        for id in ids {
            all.extend(self.read(&id)?);
        }
        Ok(all)
    }
}
