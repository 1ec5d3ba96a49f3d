//! PyProf's dict lines: [`Record::write_pydict`] and [`Record::from_pydict`].

use std::borrow::Cow;

use super::{Dir, Record};
use crate::pylit::{self, Value};

impl Record<'_> {
    /// Append this record as one PyProf dict line (with `\n`): PyProf's keys
    /// only, in PyProf's order, Python literal syntax.
    pub fn write_pydict(&self, out: &mut String) {
        fn strs(out: &mut String, v: &[Cow<'_, str>]) {
            out.push('[');
            for (i, s) in v.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                pylit::write_str_repr(out, s);
            }
            out.push(']');
        }
        fn ints(out: &mut String, v: &[i64]) {
            out.push('[');
            for (i, n) in v.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&n.to_string());
            }
            out.push(']');
        }
        fn tuple3(out: &mut String, v: &[i64; 3]) {
            out.push_str(&format!("({}, {}, {})", v[0], v[1], v[2]));
        }
        out.push_str("{'kShortName': ");
        pylit::write_str_repr(out, &self.short_name);
        out.push_str(&format!(", 'kDuration': {}, 'layer': ", self.duration_ns));
        strs(out, &self.layer);
        out.push_str(", 'trace': ");
        strs(out, &self.trace);
        out.push_str(", 'reprMarkers': ");
        strs(out, &self.repr_markers);
        out.push_str(", 'marker': ");
        strs(out, &self.marker);
        out.push_str(", 'seqMarker': ");
        strs(out, &self.seq_marker);
        out.push_str(", 'seqId': ");
        ints(out, &self.seq_id);
        out.push_str(&format!(", 'subSeqId': {}, 'altSeqId': ", self.sub_seq_id));
        ints(out, &self.alt_seq_id);
        out.push_str(", 'dir': ");
        pylit::write_str_repr(out, self.dir.as_str());
        out.push_str(", 'mod': ");
        strs(out, &self.mod_);
        out.push_str(", 'op': ");
        strs(out, &self.op);
        out.push_str(&format!(
            ", 'tid': {}, 'device': {}, 'stream': {}, 'grid': ",
            self.tid, self.device, self.stream
        ));
        tuple3(out, &self.grid);
        out.push_str(", 'block': ");
        tuple3(out, &self.block);
        out.push_str(", 'kLongName': ");
        pylit::write_str_repr(out, &self.long_name);
        out.push_str("}\n");
    }

    /// Build a record from a parsed PyProf dict line.
    pub fn from_pydict(v: &Value) -> Result<Record<'static>, String> {
        fn s(v: &Value, key: &str) -> Result<Cow<'static, str>, String> {
            match v.get(key) {
                Some(Value::Str(s)) => Ok(Cow::Owned(s.clone())),
                Some(_) => Err(format!("key '{key}' is not a string")),
                None => Err(format!("missing key '{key}'")),
            }
        }
        fn i(v: &Value, key: &str) -> Result<i64, String> {
            match v.get(key) {
                Some(Value::Int(n)) => Ok(*n),
                Some(Value::Bool(b)) => Ok(i64::from(*b)),
                Some(_) => Err(format!("key '{key}' is not an integer")),
                None => Err(format!("missing key '{key}'")),
            }
        }
        fn sl(v: &Value, key: &str) -> Result<Vec<Cow<'static, str>>, String> {
            match v.get(key) {
                None => Ok(Vec::new()),
                Some(x) => x
                    .as_seq()
                    .ok_or_else(|| format!("key '{key}' is not a list"))?
                    .iter()
                    .map(|e| match e {
                        Value::Str(s) => Ok(Cow::Owned(s.clone())),
                        other => Ok(Cow::Owned(other.to_repr())),
                    })
                    .collect(),
            }
        }
        fn il(v: &Value, key: &str) -> Result<Vec<i64>, String> {
            match v.get(key) {
                None => Ok(Vec::new()),
                Some(x) => x
                    .as_seq()
                    .ok_or_else(|| format!("key '{key}' is not a list"))?
                    .iter()
                    .map(|e| {
                        e.as_int()
                            .ok_or_else(|| format!("key '{key}' holds a non-integer"))
                    })
                    .collect(),
            }
        }
        fn dims(v: &Value, key: &str) -> Result<[i64; 3], String> {
            let items = v
                .get(key)
                .and_then(Value::as_seq)
                .ok_or_else(|| format!("key '{key}' is not a tuple"))?;
            let mut out = [1i64; 3];
            for (slot, item) in out.iter_mut().zip(items) {
                *slot = item
                    .as_int()
                    .ok_or_else(|| format!("key '{key}' holds a non-integer"))?;
            }
            Ok(out)
        }
        if !matches!(v, Value::Dict(_)) {
            return Err("not a dict".into());
        }
        Ok(Record {
            short_name: s(v, "kShortName")?,
            duration_ns: i(v, "kDuration")?,
            layer: sl(v, "layer")?,
            trace: sl(v, "trace")?,
            repr_markers: sl(v, "reprMarkers")?,
            marker: sl(v, "marker")?,
            seq_marker: sl(v, "seqMarker")?,
            seq_id: il(v, "seqId")?,
            sub_seq_id: i(v, "subSeqId").unwrap_or(0),
            alt_seq_id: il(v, "altSeqId")?,
            dir: Dir::from_text(s(v, "dir")?),
            mod_: sl(v, "mod")?,
            op: sl(v, "op")?,
            tid: i(v, "tid").unwrap_or(0) as u64,
            device: i(v, "device").unwrap_or(0),
            stream: i(v, "stream").unwrap_or(0),
            grid: dims(v, "grid")?,
            block: dims(v, "block")?,
            long_name: s(v, "kLongName")?,
            launched: true,
            ..Record::default()
        })
    }
}
