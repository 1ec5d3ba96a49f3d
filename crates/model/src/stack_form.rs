//! How much of the enclosing ranges a written record carries (`rprof parse
//! --stack`, `--stack-bytes`), and how a reader gets the full stack back.
//!
//! A record's `stack` lists every range enclosing its kernel's launch. Written
//! in full, a capture whose kernels sit under hundreds of open ranges (or one
//! range with a text of megabytes) repeats the same texts on every line, so
//! the file grows with the kernels times the depth. The compact forms keep
//! each line a self-contained record and bound what it carries:
//!
//! - [`StackMode::Runs`] (the default): consecutive equal entries (same text,
//!   same domain) written once, their repeat counts in `stackRuns`; readers
//!   expand them back, so every command sees the full stack.
//! - [`StackMode::Inner`]: only the innermost range.
//! - [`StackMode::None`]: no range.
//!
//! and, in every mode, at most `max_bytes` bytes of range text per record:
//! entries are kept from the innermost outward; the first that does not fit
//! is clipped (its head kept), the rest left out. `stackCut` counts the
//! enclosing ranges a record's `stack` leaves out and `stackCutBytes` the
//! bytes of range text left out, so nothing is dropped silently.

use std::borrow::Cow;

/// Which enclosing ranges a record carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StackMode {
    /// Every enclosing range, repeats included (schema 2.0's form).
    #[default]
    Full,
    /// Every enclosing range, consecutive repeats written once with a count.
    Runs,
    /// Only the innermost range.
    Inner,
    /// None.
    None,
}

/// The form of the stack a record is written with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StackForm {
    /// Which ranges.
    pub mode: StackMode,
    /// Most bytes of range text one record carries (0: no bound).
    pub max_bytes: usize,
}

/// Most entries a reader expands one record's `stackRuns` to: a hostile
/// count cannot make a reader allocate without bound.
pub const MAX_EXPANDED: usize = 1 << 20;

/// A stack in its written form.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shaped<'a> {
    /// Entries, outermost first.
    pub stack: Vec<Cow<'a, str>>,
    /// Their domains (`[]` when all are the default domain).
    pub domains: Vec<Cow<'a, str>>,
    /// The length of each entry's name (`[]` when the stack has none; see
    /// `Record::stack_names`).
    pub names: Vec<u32>,
    /// Repeat count of each entry (`[]` when every count is 1).
    pub runs: Vec<i64>,
    /// Enclosing ranges left out.
    pub cut: i64,
    /// Bytes of range text left out (clipped tails and left-out ranges).
    pub cut_bytes: i64,
}

/// The largest char boundary of `s` at or below `n`.
fn floor_boundary(s: &str, n: usize) -> usize {
    let mut i = n.min(s.len());
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl StackForm {
    /// True when [`StackForm::shape`] keeps the stack as it is (every
    /// entry, in order, none clipped).
    pub fn keeps_all(&self) -> bool {
        self.mode == StackMode::Full && self.max_bytes == 0
    }

    /// Shape a full stack (outermost first; `domains` and `names` each
    /// empty or one per entry) into its written form.
    pub fn shape<'a>(
        &self,
        stack: Vec<Cow<'a, str>>,
        domains: Vec<Cow<'a, str>>,
        names: Vec<u32>,
    ) -> Shaped<'a> {
        if self.keeps_all() {
            return Shaped {
                stack,
                domains,
                names,
                ..Shaped::default()
            };
        }
        let depth = stack.len();
        let total_bytes: usize = stack.iter().map(|s| s.len()).sum();
        let has_domains = domains.len() == depth && depth > 0;
        let has_names = names.len() == depth && depth > 0;
        let entry = |i: usize| Entry {
            text: stack[i].clone(),
            domain: if has_domains {
                domains[i].clone()
            } else {
                Cow::Borrowed("")
            },
            name: if has_names { names[i] } else { 0 },
            run: 1,
        };
        // outermost first
        let mut entries: Vec<Entry<'a>> = Vec::new();
        match self.mode {
            StackMode::None => {}
            StackMode::Inner => {
                if depth > 0 {
                    entries.push(entry(depth - 1));
                }
            }
            StackMode::Full => entries.extend((0..depth).map(entry)),
            StackMode::Runs => {
                for i in 0..depth {
                    let e = entry(i);
                    match entries.last_mut() {
                        Some(last)
                            if last.text == e.text
                                && last.domain == e.domain
                                && last.name == e.name =>
                        {
                            last.run += 1
                        }
                        _ => entries.push(e),
                    }
                }
            }
        }
        // the byte bound, from the innermost entry outward
        if self.max_bytes > 0 {
            let mut used = 0usize;
            let mut keep_from = entries.len();
            while keep_from > 0 {
                let e = &mut entries[keep_from - 1];
                if used + e.text.len() <= self.max_bytes {
                    used += e.text.len();
                    keep_from -= 1;
                    continue;
                }
                // clip the first entry that does not fit (keep its head,
                // where range names start) unless nothing of it would remain
                let room = floor_boundary(&e.text, self.max_bytes - used);
                if room > 0 {
                    let clipped: Cow<'a, str> = match &e.text {
                        Cow::Borrowed(b) => Cow::Borrowed(&b[..room]),
                        Cow::Owned(o) => Cow::Owned(o[..room].to_owned()),
                    };
                    e.text = clipped;
                    // a clipped name ends where the text does
                    e.name = e.name.min(u32::try_from(room).unwrap_or(u32::MAX));
                    keep_from -= 1;
                }
                break;
            }
            entries.drain(..keep_from);
        }
        let kept_ranges: usize = entries.iter().map(|e| e.run).sum();
        let kept_bytes: usize = entries.iter().map(|e| e.text.len() * e.run).sum();
        let runs = if entries.iter().any(|e| e.run > 1) {
            entries.iter().map(|e| e.run as i64).collect()
        } else {
            Vec::new()
        };
        let any_domain = entries.iter().any(|e| !e.domain.is_empty());
        let mut out = Shaped {
            cut: (depth - kept_ranges) as i64,
            cut_bytes: (total_bytes - kept_bytes) as i64,
            runs,
            ..Shaped::default()
        };
        for e in entries {
            out.stack.push(e.text);
            if any_domain {
                out.domains.push(e.domain);
            }
            if has_names {
                out.names.push(e.name);
            }
        }
        out
    }
}

/// One written stack entry.
struct Entry<'a> {
    text: Cow<'a, str>,
    domain: Cow<'a, str>,
    /// Length of its name (0 when the stack has no names).
    name: u32,
    /// Times it repeats.
    run: usize,
}

/// Expand a written stack's runs in place (the reader's side of
/// [`StackMode::Runs`]). Errors when `runs` does not match `stack`, holds a
/// count below 1, or expands beyond [`MAX_EXPANDED`] entries.
pub fn expand_runs<'a>(
    stack: &mut Vec<Cow<'a, str>>,
    domains: &mut Vec<Cow<'a, str>>,
    names: &mut Vec<u32>,
    runs: &[i64],
) -> Result<(), String> {
    if runs.is_empty() {
        return Ok(());
    }
    if runs.len() != stack.len() {
        return Err(format!(
            "stackRuns has {} counts for {} stack entries",
            runs.len(),
            stack.len()
        ));
    }
    let mut total = 0usize;
    for &n in runs {
        if n < 1 {
            return Err(format!("stackRuns holds {n}, below 1"));
        }
        total = total.saturating_add(usize::try_from(n).unwrap_or(usize::MAX));
    }
    if total > MAX_EXPANDED {
        return Err(format!(
            "stackRuns expands to {total} entries, more than the {MAX_EXPANDED} rprof reads"
        ));
    }
    let with_domains = domains.len() == stack.len();
    let with_names = names.len() == stack.len();
    let mut s = Vec::with_capacity(total);
    let mut d = Vec::with_capacity(if with_domains { total } else { 0 });
    let mut l = Vec::with_capacity(if with_names { total } else { 0 });
    for (i, &n) in runs.iter().enumerate() {
        for _ in 0..n {
            s.push(stack[i].clone());
            if with_domains {
                d.push(domains[i].clone());
            }
            if with_names {
                l.push(names[i]);
            }
        }
    }
    *stack = s;
    if with_domains {
        *domains = d;
    }
    if with_names {
        *names = l;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(xs: &[&'static str]) -> Vec<Cow<'static, str>> {
        xs.iter().map(|x| Cow::Borrowed(*x)).collect()
    }

    #[test]
    fn runs_collapse_and_expand_back() {
        let full = v(&["a", "b", "b", "b", "c", "b"]);
        let f = StackForm {
            mode: StackMode::Runs,
            max_bytes: 0,
        };
        let s = f.shape(full.clone(), Vec::new(), Vec::new());
        assert_eq!(s.stack, v(&["a", "b", "c", "b"]));
        assert_eq!(s.runs, vec![1, 3, 1, 1]);
        assert_eq!((s.cut, s.cut_bytes), (0, 0));
        let (mut st, mut d) = (s.stack, s.domains);
        expand_runs(&mut st, &mut d, &mut Vec::new(), &s.runs).unwrap();
        assert_eq!(st, full);
    }

    #[test]
    fn byte_bound_keeps_innermost_and_counts_the_rest() {
        // 3 + 4 + 5 bytes under a bound of 7, kept from the innermost out
        let full = v(&["aaa", "bbbb", "ccccc"]);
        let f = StackForm {
            mode: StackMode::Full,
            max_bytes: 7,
        };
        let s = f.shape(full, Vec::new(), Vec::new());
        // "ccccc" (5) fits, "bbbb" clipped to 2, "aaa" left out
        assert_eq!(s.stack, v(&["bb", "ccccc"]));
        assert_eq!(s.cut, 1);
        assert_eq!(s.cut_bytes, 2 + 3);
    }

    #[test]
    fn inner_and_none_count_what_they_leave_out() {
        let full = v(&["x", "yy", "zzz"]);
        let dom = v(&["", "d", ""]);
        let i = StackForm {
            mode: StackMode::Inner,
            max_bytes: 0,
        }
        .shape(full.clone(), dom.clone(), Vec::new());
        assert_eq!(i.stack, v(&["zzz"]));
        assert!(i.domains.is_empty(), "all kept domains are default");
        assert_eq!((i.cut, i.cut_bytes), (2, 3));
        let n = StackForm {
            mode: StackMode::None,
            max_bytes: 0,
        }
        .shape(full, dom, Vec::new());
        assert!(n.stack.is_empty());
        assert_eq!((n.cut, n.cut_bytes), (3, 6));
    }

    #[test]
    fn clipping_respects_char_boundaries() {
        let f = StackForm {
            mode: StackMode::Inner,
            max_bytes: 2,
        };
        let s = f.shape(v(&["éé"]), Vec::new(), Vec::new());
        assert_eq!(s.stack, v(&["é"]));
        assert_eq!(s.cut_bytes, 2);
        assert_eq!(s.cut, 0);
    }

    #[test]
    fn hostile_runs_are_refused() {
        let (mut s, mut d) = (v(&["a"]), Vec::new());
        assert!(expand_runs(&mut s, &mut d, &mut Vec::new(), &[i64::MAX]).is_err());
        assert!(expand_runs(&mut s, &mut d, &mut Vec::new(), &[0]).is_err());
        assert!(expand_runs(&mut s, &mut d, &mut Vec::new(), &[1, 1]).is_err());
    }

    /// Name lengths follow their entries: equal texts with different names
    /// are separate runs, a run expands back with its name, and a clipped
    /// entry's name ends where its text does. Expected values by hand.
    #[test]
    fn names_follow_their_entries() {
        // "a, seq = 1" twice as an annotation (name 10), then as an op
        // named "a" (name 1), then "bb"
        let full = v(&["a, seq = 1", "a, seq = 1", "a, seq = 1", "bb"]);
        let names = vec![10, 10, 1, 2];
        let runs = StackForm {
            mode: StackMode::Runs,
            max_bytes: 0,
        };
        let s = runs.shape(full.clone(), Vec::new(), names.clone());
        assert_eq!(s.stack, v(&["a, seq = 1", "a, seq = 1", "bb"]));
        assert_eq!(s.runs, vec![2, 1, 1]);
        assert_eq!(s.names, vec![10, 1, 2]);
        let (mut st, mut d, mut n) = (s.stack, s.domains, s.names);
        expand_runs(&mut st, &mut d, &mut n, &s.runs).unwrap();
        assert_eq!((st, n), (full.clone(), names.clone()));

        // 13 bytes: "bb" and the op "a" (12 bytes) fit; the annotation
        // before them is clipped to 1 byte and its name to 1
        let clip = StackForm {
            mode: StackMode::Full,
            max_bytes: 13,
        };
        let s = clip.shape(full.clone(), Vec::new(), names.clone());
        assert_eq!(s.stack, v(&["a", "a, seq = 1", "bb"]));
        assert_eq!(s.names, vec![1, 1, 2]);
        // inner: the innermost's name alone; none: nothing
        let inner = StackForm {
            mode: StackMode::Inner,
            max_bytes: 0,
        };
        assert_eq!(inner.shape(full.clone(), Vec::new(), names).names, vec![2]);
        // a stack without names stays without
        assert!(runs.shape(full, Vec::new(), Vec::new()).names.is_empty());
    }
}
