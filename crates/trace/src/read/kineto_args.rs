//! An event's `args` object, as the few members the Kineto reader uses.
//!
//! Read into a `serde_json::Value`, every member of every event became a
//! map entry with an owned key and value: a quarter of the building
//! thread's time went to allocating and freeing them, although a kernel
//! uses a dozen of its twenty members and an operator fewer. Here each
//! member the reader knows is kept as its raw JSON text, borrowed from the
//! input, and the others are skipped; a member is interpreted only when the
//! reader asks for it (a number without allocating; `Value` only for the
//! arrays and for the rare text that is re-printed).
//!
//! Same answers as the map: a member given twice counts with its last
//! value; keys are compared after unescaping; an `args` that is not an
//! object, or not valid JSON, has no members. One difference: a member
//! nested deeper than serde_json's 128 levels made the map fail, so the
//! event lost every member; now it is skipped like any other.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

macro_rules! keys {
    ($($key:ident = $text:literal,)*) => {
        /// The `args` members the reader uses.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u8)]
        pub(super) enum Key { $($key,)* }

        /// How many [`Key`]s there are.
        const KEYS: usize = [$($text,)*].len();

        impl Key {
            /// The key whose member name is `text`.
            fn of(text: &str) -> Option<Key> {
                match text {
                    $($text => Some(Key::$key),)*
                    _ => None,
                }
            }
        }
    };
}

keys! {
    Device = "device",
    Context = "context",
    Stream = "stream",
    Correlation = "correlation",
    Grid = "grid",
    Block = "block",
    Registers = "registers per thread",
    SharedMemory = "shared memory",
    GraphId = "graph id",
    GraphNodeId = "graph node id",
    BlocksPerSm = "blocks per SM",
    WarpsPerSm = "warps per SM",
    Occupancy = "est. achieved occupancy %",
    Bytes = "bytes",
    SyncKind = "cuda_sync_kind",
    SequenceNumber = "Sequence number",
    InputDims = "Input Dims",
    InputType = "Input type",
    ExternalId = "External id",
    ExternalIdOld = "external id",
    ModuleHierarchy = "Module Hierarchy",
    CallStack = "Call stack",
    CollectiveName = "Collective name",
    InNelems = "In msg nelems",
    OutNelems = "Out msg nelems",
    GroupSize = "Group size",
    Dtype = "dtype",
    PgName = "Process Group Name",
    PgRanks = "Process Group Ranks",
}

/// The members of one event's `args` that the reader uses, as raw JSON.
#[derive(Default)]
pub(super) struct Args<'a> {
    raw: [Option<&'a RawValue>; KEYS],
}

impl<'a> Args<'a> {
    /// The members of `text` (an event's `args` as raw JSON); none when it
    /// is absent, not an object or not valid JSON.
    pub(super) fn parse(text: Option<&'a str>) -> Args<'a> {
        let Some(text) = text else {
            return Args::default();
        };
        let mut de = serde_json::Deserializer::from_str(text);
        ArgsSeed
            .deserialize(&mut de)
            .and_then(|a| de.end().map(|()| a))
            .unwrap_or_default()
    }

    /// The member's raw JSON text.
    pub(super) fn raw(&self, key: Key) -> Option<&'a RawValue> {
        self.raw[key as usize]
    }

    /// The member as a JSON value (allocates for strings and arrays).
    pub(super) fn value(&self, key: Key) -> Option<Value> {
        serde_json::from_str(self.raw(key)?.get()).ok()
    }

    /// The member when it is a string: borrowed when it has no escapes.
    pub(super) fn str(&self, key: Key) -> Option<Cow<'a, str>> {
        super::kineto::raw_str(&Some(self.raw(key)?.get()))
    }

    /// The member as an integer, as `num_i64` reads a JSON value: a number
    /// (a fraction truncated) or a string holding one.
    pub(super) fn i64(&self, key: Key) -> Option<i64> {
        super::kineto::num_i64(self.scalar(key).as_ref())
    }

    /// The member as a float: a number or a string holding one.
    pub(super) fn f64(&self, key: Key) -> Option<f64> {
        super::kineto::num_f64(self.scalar(key).as_ref())
    }

    /// A number, or a string (which the number readers parse); `None` for
    /// anything else, without parsing arrays or objects.
    fn scalar(&self, key: Key) -> Option<Value> {
        let raw = self.raw(key)?.get();
        match raw.as_bytes().first()? {
            b'[' | b'{' => None,
            _ => serde_json::from_str(raw).ok(),
        }
    }
}

/// Reads an `args` value into [`Args`].
struct ArgsSeed;

impl<'de> DeserializeSeed<'de> for ArgsSeed {
    type Value = Args<'de>;
    fn deserialize<D: de::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ArgsSeed {
    type Value = Args<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an args object")
    }

    fn visit_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        let mut out = Args::default();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            match key {
                Some(k) => out.raw[k as usize] = Some(map.next_value::<&'de RawValue>()?),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(out)
    }

    // anything but an object has no members
    fn visit_seq<A: de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Args::default())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> std::result::Result<Self::Value, E> {
        Ok(Args::default())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> std::result::Result<Self::Value, E> {
        Ok(Args::default())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> std::result::Result<Self::Value, E> {
        Ok(Args::default())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> std::result::Result<Self::Value, E> {
        Ok(Args::default())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> std::result::Result<Self::Value, E> {
        Ok(Args::default())
    }
    fn visit_unit<E: de::Error>(self) -> std::result::Result<Self::Value, E> {
        Ok(Args::default())
    }
}

/// Reads a member name as the [`Key`] it names, if any, without copying it.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Option<Key>;
    fn deserialize<D: de::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Option<Key>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Self::Value, E> {
        Ok(Key::of(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the reader got before: the member of the `args` read as a map.
    fn from_map(text: &str, key: &str) -> Option<Value> {
        let v: Value = serde_json::from_str(text).unwrap_or(Value::Null);
        v.get(key).cloned()
    }

    #[test]
    fn members_as_the_map_reads_them() {
        let texts = [
            r#"{"device": 1, "stream": 7, "grid": [1, 2, 3], "other": {"x": [1]}}"#,
            // given twice: the last counts
            r#"{"device": 1, "device": 2}"#,
            // an escaped key is the same key
            r#"{"devic\u0065": 3, "Call stack": "a\nb"}"#,
            // numbers as strings, fractions, big numbers
            r#"{"device": "4", "stream": 1.9, "correlation": 18446744073709551615}"#,
            // not an object, not JSON, nothing
            "[1, 2]",
            "3",
            "\"device\"",
            "null",
            "{\"device\": 1",
            "{}",
        ];
        for text in texts {
            let args = Args::parse(Some(text));
            for key in ["device", "stream", "grid", "correlation", "Call stack"] {
                let k = Key::of(key).unwrap();
                let old = from_map(text, key);
                assert_eq!(args.value(k), old, "{text} {key}");
                assert_eq!(
                    args.i64(k),
                    super::super::kineto::num_i64(old.as_ref()),
                    "{text} {key}"
                );
                assert_eq!(
                    args.f64(k),
                    super::super::kineto::num_f64(old.as_ref()),
                    "{text} {key}"
                );
                assert_eq!(
                    args.str(k).map(Cow::into_owned),
                    old.as_ref().and_then(Value::as_str).map(str::to_owned),
                    "{text} {key}"
                );
            }
        }
        assert!(Args::parse(None).raw(Key::Device).is_none());
    }

    #[test]
    fn strings_and_ids_as_serde_reads_them() {
        use super::super::kineto::{raw_id, raw_str};
        let texts = [
            r#""plain""#,
            r#""""#,
            r#""tab\tand \"quotes\"""#,
            r#""\u00e9t\u00e9""#,
            "\"raw \u{1} control\"",
            "\"",
            "12",
            "-7",
            "-0",
            "1.5",
            "1e3",
            "18446744073709551615",
            r#""42""#,
            r#"" 42 ""#,
            r#""stream 7""#,
            "null",
            "[1]",
        ];
        for t in texts {
            let reference = serde_json::from_str::<String>(t).ok();
            assert_eq!(raw_str(&Some(t)).map(Cow::into_owned), reference, "{t}");
            let id = match serde_json::from_str::<i64>(t) {
                Ok(n) => Some(n as u64),
                Err(_) => reference.map(|s| match s.trim().parse::<i64>() {
                    Ok(n) => n as u64,
                    Err(_) => 0,
                }),
            };
            // a non-numeric string is hashed (high bit set): compare that it
            // is one, not its value
            let got = raw_id(&Some(t)).map(|n| if n >> 63 == 1 && id == Some(0) { 0 } else { n });
            assert_eq!(got, id, "{t}");
        }
    }

    /// A member nested past serde_json's 128 levels made the whole map
    /// fail to parse, so the event had no members at all; skipping it has
    /// no such limit, and the members rprof uses are read.
    #[test]
    fn deep_members_do_not_hide_the_others() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let text = format!(r#"{{"other": {deep}, "device": 3}}"#);
        assert_eq!(from_map(&text, "device"), None);
        assert_eq!(Args::parse(Some(&text)).i64(Key::Device), Some(3));
    }

    #[test]
    fn every_key_reads_back() {
        let names = [
            "device",
            "context",
            "stream",
            "correlation",
            "grid",
            "block",
            "registers per thread",
            "shared memory",
            "graph id",
            "graph node id",
            "blocks per SM",
            "warps per SM",
            "est. achieved occupancy %",
            "bytes",
            "cuda_sync_kind",
            "Sequence number",
            "Input Dims",
            "Input type",
            "External id",
            "external id",
            "Module Hierarchy",
            "Call stack",
            "Collective name",
            "In msg nelems",
            "Out msg nelems",
            "Group size",
            "dtype",
            "Process Group Name",
            "Process Group Ranks",
        ];
        assert_eq!(names.len(), KEYS);
        let text = format!(
            "{{{}}}",
            names
                .iter()
                .enumerate()
                .map(|(i, n)| format!("{n:?}: {i}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let args = Args::parse(Some(&text));
        for (i, n) in names.iter().enumerate() {
            assert_eq!(args.i64(Key::of(n).unwrap()), Some(i as i64), "{n}");
        }
    }
}
