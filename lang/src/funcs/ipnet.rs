//! cidrhost, cidrnetmask, cidrsubnet, cidrsubnets, with the same range rules
//! and messages as Terraform (which uses apparentlymart/go-cidr).

use super::{def, def_var, int_arg, p, str_arg, FnError, FuncDef};
use crate::lang::types::Type;
use crate::lang::value::Value;
use std::net::{Ipv4Addr, Ipv6Addr};

/// A network as an integer address, its prefix length and its width (32 or 128).
#[derive(Clone, Copy)]
struct Net {
    addr: u128,
    len: u32,
    bits: u32,
}

impl Net {
    fn parse(s: &str, i: usize) -> Result<Net, FnError> {
        let bad = || FnError::arg(i, format!("invalid CIDR address: {s}"));
        let (ip, len) = s.split_once('/').ok_or_else(bad)?;
        let len: u32 = len.parse().map_err(|_| bad())?;
        let (addr, bits) = if let Ok(v4) = ip.parse::<Ipv4Addr>() {
            (u32::from(v4) as u128, 32)
        } else if let Ok(v6) = ip.parse::<Ipv6Addr>() {
            (u128::from(v6), 128)
        } else {
            return Err(bad());
        };
        if len > bits {
            return Err(bad());
        }
        Ok(Net {
            addr: addr & mask(len, bits),
            len,
            bits,
        })
    }

    fn ip_string(&self, addr: u128) -> String {
        if self.bits == 32 {
            Ipv4Addr::from(addr as u32).to_string()
        } else {
            Ipv6Addr::from(addr).to_string()
        }
    }

    fn host_count(&self) -> u128 {
        let host_bits = self.bits - self.len;
        if host_bits >= 128 {
            u128::MAX
        } else {
            1u128 << host_bits
        }
    }
}

impl std::fmt::Display for Net {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.ip_string(self.addr), self.len)
    }
}

fn mask(len: u32, bits: u32) -> u128 {
    let all = if bits == 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    };
    if len == 0 {
        0
    } else {
        all & !(all >> len)
    }
}

fn subnet(net: Net, newbits: i64, netnum: i64) -> Result<Net, FnError> {
    // Negative newbits shorten the prefix, as Terraform (go-cidr) does;
    // below zero bits Terraform answers "<nil>", strata an error.
    let new_len = net.len as i64 + newbits;
    if new_len < 0 {
        return Err(FnError::call(format!(
            "cannot shorten a prefix of {} by {} bits",
            net.len, -newbits
        )));
    }
    if new_len > net.bits as i64 {
        return Err(FnError::call(format!(
            "insufficient address space to extend prefix of {} by {}",
            net.len, newbits
        )));
    }
    // go-cidr checks the magnitude of netnum and ORs it into the address as
    // a signed big integer, whose absolute value becomes the address; a
    // negative netnum therefore gives what Terraform gives, odd as it is.
    // go-cidr computes the largest netnum in unsigned 64-bit arithmetic,
    // where a negative newbits allows every number.
    let max = if !(0..64).contains(&newbits) {
        u64::MAX as u128
    } else {
        (1u128 << newbits) - 1
    };
    if netnum.unsigned_abs() as u128 > max {
        return Err(FnError::call(format!(
            "prefix extension of {newbits} does not accommodate a subnet numbered {netnum}"
        )));
    }
    let shift = (net.bits as i64 - new_len) as u32;
    let addr = if netnum >= 0 {
        net.addr | ((netnum as u128).checked_shl(shift).unwrap_or(0))
    } else {
        let v = (net.addr as i128) | (netnum as i128).checked_shl(shift).unwrap_or(0);
        v.unsigned_abs()
            & if net.bits == 32 {
                u32::MAX as u128
            } else {
                u128::MAX
            }
    };
    Ok(Net {
        addr,
        len: new_len as u32,
        bits: net.bits,
    })
}

pub fn register(defs: &mut Vec<FuncDef>) {
    let st = || Type::String;
    defs.push(def(
        "cidrhost",
        vec![p("prefix", st()), p("hostnum", Type::Number)],
        st(),
        |_, a| {
            let net = Net::parse(str_arg(a, 0), 0)?;
            let hostnum = int_arg(a, 1)?;
            let count = net.host_count();
            let offset = if hostnum < 0 {
                count.checked_sub(hostnum.unsigned_abs() as u128)
            } else if (hostnum as u128) < count {
                Some(hostnum as u128)
            } else {
                None
            };
            let offset = offset.ok_or_else(|| {
                FnError::call(format!(
                    "prefix of {} does not accommodate a host numbered {hostnum}",
                    net.len
                ))
            })?;
            Ok(Value::String(net.ip_string(net.addr + offset)))
        },
    ));
    defs.push(def("cidrnetmask", vec![p("prefix", st())], st(), |_, a| {
        let net = Net::parse(str_arg(a, 0), 0)?;
        if net.bits != 32 {
            return Err(FnError::arg(0, "only IPv4 networks are supported"));
        }
        Ok(Value::String(
            Ipv4Addr::from(mask(net.len, 32) as u32).to_string(),
        ))
    }));
    defs.push(def(
        "cidrsubnet",
        vec![
            p("prefix", st()),
            p("newbits", Type::Number),
            p("netnum", Type::Number),
        ],
        st(),
        |_, a| {
            let net = Net::parse(str_arg(a, 0), 0)?;
            Ok(Value::String(
                subnet(net, int_arg(a, 1)?, int_arg(a, 2)?)?.to_string(),
            ))
        },
    ));
    defs.push(def_var("cidrsubnets", vec![p("prefix", st())], p("newbits", Type::Number), Type::list(st()), |_, a| {
        let net = Net::parse(str_arg(a, 0), 0)?;
        if a.len() < 2 {
            return Ok(Value::List(Type::String, vec![]));
        }
        let first = int_arg(a, 1)?;
        // Start just before the network so the first "next subnet" is its start.
        let mut cur = {
            let len = (net.len as i64 + first).clamp(0, net.bits as i64) as u32;
            let prev = net.addr.wrapping_sub(1) & if net.bits == 32 { u32::MAX as u128 } else { u128::MAX };
            Net { addr: prev & mask(len, net.bits), len, bits: net.bits }
        };
        let mut out = Vec::new();
        for i in 1..a.len() {
            let nb = int_arg(a, i)?;
            if nb < 1 {
                return Err(FnError::arg(i, "must extend prefix by at least one bit"));
            }
            let len = net.len as i64 + nb;
            if len > net.bits as i64 {
                return Err(FnError::arg(i, format!("would extend prefix to {len} bits, which is too long for an IPv{} address", if net.bits == 32 { 4 } else { 6 })));
            }
            let len = len as u32;
            let m = mask(len, net.bits);
            let width_mask = if net.bits == 32 { u32::MAX as u128 } else { u128::MAX };
            // The last address of the current subnet, re-masked at the new length, plus one block.
            let cur_last = cur.addr | (!mask(cur.len, net.bits) & width_mask);
            let base = cur_last & m;
            let block_last = base | (!m & width_mask);
            let next = block_last.wrapping_add(1) & width_mask;
            let rolled = next == 0;
            let inside = (next & mask(net.len, net.bits)) == net.addr;
            if rolled || !inside {
                return Err(FnError::arg(i, format!("not enough remaining address space for a subnet with a prefix of {len} bits after {}", cur)));
            }
            cur = Net { addr: next & m, len, bits: net.bits };
            out.push(Value::String(cur.to_string()));
        }
        Ok(Value::List(Type::String, out))
    }));
}
