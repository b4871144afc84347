//! The resource blocks of a module tree by address, for a stage that
//! looks up one per change or per reference: [`Module::resource_at`]
//! searches a module's list, which over every change of a large plan
//! grows with the square of its size.

use super::{Module, Resource};
use std::collections::HashMap;
use strata_state::model::{Mode, ModulePath, ResourceAddr};

/// A resource's key within its module.
type Local<'m> = (Mode, &'m str, &'m str);

pub struct ResourceIndex<'m> {
    /// By the module's keyless path, then by mode, type and name.
    modules: HashMap<ModulePath, HashMap<Local<'m>, &'m Resource>>,
}

impl<'m> ResourceIndex<'m> {
    pub fn of(root: &'m Module) -> ResourceIndex<'m> {
        let mut modules = HashMap::new();
        let mut pending = vec![(ModulePath::root(), root)];
        while let Some((path, m)) = pending.pop() {
            let own = m
                .resources
                .iter()
                .map(|r| ((r.mode, r.type_name.as_str(), r.name.as_str()), r));
            modules.insert(path.clone(), own.collect());
            for c in &m.module_calls {
                pending.push((path.child(&c.name, None), &c.module));
            }
        }
        ResourceIndex { modules }
    }

    /// The block at `addr` (its module's keys are not looked at, as
    /// [`Module::resource_at`] does not look at them).
    pub fn get(&self, addr: &ResourceAddr) -> Option<&'m Resource> {
        let local = (addr.mode, addr.type_name.as_str(), addr.name.as_str());
        self.in_module(&addr.module, local)
    }

    /// The block of mode, type and name `local` in the module at `module`.
    pub fn in_module(&self, module: &ModulePath, local: Local<'_>) -> Option<&'m Resource> {
        let own = self.modules.get(&module.without_keys())?;
        find(own, local)
    }
}

/// Looked up by strings shorter-lived than the index's own: the map's
/// key type is covariant, so it is taken here at their lifetime.
fn find<'a, 'm>(
    module: &HashMap<Local<'a>, &'m Resource>,
    local: Local<'a>,
) -> Option<&'m Resource> {
    module.get(&local).copied()
}
