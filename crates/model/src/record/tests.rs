//! Tests of the record formats.

use super::json::{ESCAPE, skip_clean_words, word_needs_escape};
use super::*;

const PYDICT: &str = "{'kShortName': 'softmax_warp_forward', 'kDuration': 50, 'layer': ['Block1', 'Conv'], 'trace': ['/home/u/x.py:10', '/home/u/y.py:20'], 'reprMarkers': [], 'marker': [\"{'mod': 'torch.nn.functional', 'op': 'softmax', 'args': [{'name': '', 'type': 'tensor', 'shape': (32, 10), 'dtype': 'float32'}, {'name': 'dim', 'type': 'int', 'value': 1}]}\"], 'seqMarker': ['aten::_softmax, seq = 20', 'aten::softmax, seq = 20'], 'seqId': [20], 'subSeqId': 0, 'altSeqId': [], 'dir': 'fprop', 'mod': ['torch.nn.functional'], 'op': ['softmax'], 'tid': 5, 'device': 0, 'stream': 7, 'grid': (10, 1, 1), 'block': (128, 1, 1), 'kLongName': 'void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false>(float*, const float*, int, int, int)'}";

#[test]
fn pydict_round_trip_is_byte_exact() {
    let Line::Record(r) = read_line(PYDICT).unwrap() else {
        panic!("not a record")
    };
    assert_eq!(r.layer, vec!["Block1", "Conv"]);
    assert_eq!(r.grid, [10, 1, 1]);
    let mut out = String::new();
    r.write_pydict(&mut out);
    assert_eq!(out, format!("{PYDICT}\n"));
}

#[test]
fn json_round_trip() {
    let Line::Record(r) = read_line(PYDICT).unwrap() else {
        panic!("not a record")
    };
    let mut r = r.into_owned();
    r.stack = vec!["layer:Block1".into(), "x, seq = 20".into()];
    r.launched = false;
    let mut buf = Vec::new();
    r.write_json(&mut buf);
    let text = String::from_utf8(buf).unwrap();
    assert!(text.starts_with("{\"kShortName\":\"softmax_warp_forward\",\"kDuration\":50,"));
    assert!(text.contains("\"launched\":false"));
    let Line::Record(back) = read_line(&text).unwrap() else {
        panic!("not a record")
    };
    assert_eq!(*back, r);
}

fn arb_cow() -> impl proptest::strategy::Strategy<Value = Cow<'static, str>> {
    use proptest::prelude::*;
    prop_oneof![
        "[a-z:_ ,=\\[\\]0-9]{0,30}",
        "\\PC{0,10}",
        r#"[\x00-\x1f"\\\x7f]{0,6}"#
    ]
    .prop_map(Cow::Owned)
}

/// The word test says whether any of eight bytes needs escaping, and the
/// sixteen-byte test which is the first, by the escape table, whatever
/// follows it.
#[test]
fn escape_tests_are_exact() {
    for b in 0u8..=255 {
        for pos in 0..16 {
            let mut w = [b'a'; 16];
            w[pos] = b;
            if let Some(word) = w.first_chunk::<8>() {
                let dirty = pos < 8 && ESCAPE[b as usize];
                assert_eq!(
                    word_needs_escape(u64::from_le_bytes(*word)),
                    dirty,
                    "{b} at {pos}"
                );
            }
            #[cfg(target_arch = "x86_64")]
            {
                use super::json::first_escape_16;
                let want = ESCAPE[b as usize].then_some(pos);
                assert_eq!(first_escape_16(&w), want, "{b} at {pos}");
                // a later byte that needs escaping does not hide it
                if pos < 15 {
                    w[15] = b'"';
                    let first = Some(want.unwrap_or(15));
                    assert_eq!(first_escape_16(&w), first, "{b} at {pos}");
                }
            }
        }
    }
}

proptest::proptest! {
    /// Every byte the skip steps over is clean, and it stops within a
    /// word of the first that is not (or of the end).
    #[test]
    fn skip_clean_words_stops_at_the_first_escape(
        bytes in proptest::collection::vec(
            proptest::prop_oneof![8 => b'a'..=b'z', 1 => proptest::prelude::any::<u8>()],
            0..80,
        ),
        from in 0usize..80,
    ) {
        let from = from.min(bytes.len());
        let to = skip_clean_words(&bytes, from);
        let first = bytes[from..]
            .iter()
            .position(|&b| ESCAPE[b as usize])
            .map_or(bytes.len(), |p| from + p);
        proptest::prop_assert!(from <= to && to <= first, "{from} {to} {first}");
        proptest::prop_assert!(first - to < 8, "{from} {to} {first}");
    }
}

/// The proptest inputs as a record, every field set from them.
#[allow(clippy::too_many_arguments)]
fn record_of(
    strs: &[Cow<'static, str>],
    lists: &[Vec<Cow<'static, str>>],
    ints: &[i64],
    opts: &[Option<i64>],
    flags: &[bool],
    tid: u64,
    pid: Option<u64>,
    names: Vec<u32>,
) -> Record<'static> {
    Record {
        short_name: strs[0].clone(),
        duration_ns: ints[0],
        layer: lists[0].clone(),
        trace: lists[1].clone(),
        repr_markers: lists[2].clone(),
        marker: lists[3].clone(),
        seq_marker: lists[4].clone(),
        seq_id: ints[1..3].to_vec(),
        sub_seq_id: ints[3],
        alt_seq_id: ints[4..5].to_vec(),
        dir: super::Dir::from_text(strs[1].clone()),
        mod_: lists[5].clone(),
        op: lists[6].clone(),
        tid,
        device: ints[5],
        stream: ints[6],
        grid: [ints[7], ints[8], ints[9]],
        block: [ints[10], ints[11], ints[0]],
        long_name: strs[2].clone(),
        start_ns: opts[0],
        end_ns: opts[1],
        launch_start_ns: opts[2],
        launch_end_ns: opts[3],
        launched: flags[0],
        api: Some(strs[3].clone()).filter(|_| opts[4].is_some()),
        pid,
        correlation: opts[5],
        context: opts[6],
        regs: opts[7],
        static_smem_bytes: opts[8],
        dynamic_smem_bytes: opts[9],
        graph_id: opts[10],
        graph_node_id: opts[0],
        device_name: Some(strs[4].clone()).filter(|_| opts[1].is_some()),
        sm_count: opts[2],
        cc_major: opts[6],
        cc_minor: opts[7],
        stack: lists[7].clone(),
        stack_names: names,
        domains: lists[0].clone(),
        stack_runs: ints[2..4].to_vec(),
        stack_cut: ints[4],
        stack_cut_bytes: ints[5],
        bad_time: flags[1],
        kineto_blocks_per_sm: opts[3].map(|x| x as f64 / 7.0),
        kineto_warps_per_sm: opts[4].map(|x| x as f64 * 1e-300),
        kineto_occupancy_pct: opts[5].map(|x| (x % 101) as f64),
    }
}

/// A record with every field drawn (strings with escapes, any integers,
/// optional fields present or not).
pub(crate) fn arb_record() -> impl proptest::strategy::Strategy<Value = Record<'static>> {
    use proptest::prelude::*;
    (
        (
            proptest::collection::vec(arb_cow(), 6),
            proptest::collection::vec(proptest::collection::vec(arb_cow(), 0..3), 8),
            proptest::collection::vec(proptest::num::i64::ANY, 12),
            proptest::collection::vec(proptest::option::of(proptest::num::i64::ANY), 11),
        ),
        (
            proptest::collection::vec(proptest::bool::ANY, 2),
            proptest::num::u64::ANY,
            proptest::option::of(proptest::num::u64::ANY),
            proptest::collection::vec(proptest::num::u32::ANY, 0..4),
        ),
    )
        .prop_map(|((strs, lists, ints, opts), (flags, tid, pid, names))| {
            record_of(&strs, &lists, &ints, &opts, &flags, tid, pid, names)
        })
}

/// What the fast reader's test inserts into a line (or, past the end of
/// this list, deletes a character).
const EDITS: [&str; 16] = [
    " ",
    "-",
    "0",
    "9",
    ".5",
    "e1",
    "\\",
    "\"",
    "\u{1}",
    ",\"x\":1",
    "null",
    "}",
    "[",
    "]",
    "\\u00e9",
    "18446744073709551616",
];

proptest::proptest! {
    /// The hand-written writer prints what serde_json prints.
    #[test]
    fn write_json_equals_serde(
        r in arb_record(),
    ) {
        let mut ours = Vec::new();
        r.write_json(&mut ours);
        let mut theirs = serde_json::to_vec(&r).unwrap();
        theirs.push(b'\n');
        proptest::prop_assert_eq!(String::from_utf8(ours).unwrap(), String::from_utf8(theirs).unwrap());
    }

    /// The fast reader reads every line the writer writes, as serde does;
    /// a line edited anywhere it reads as serde does or leaves to serde,
    /// and never accepts a line serde refuses.
    #[test]
    fn fast_reader_reads_what_serde_reads(
        r in arb_record(),
        edits in proptest::collection::vec(
            (proptest::num::usize::ANY, 0..EDITS.len() + 1),
            1..4,
        ),
    ) {
        let mut out = Vec::new();
        r.write_json(&mut out);
        let line = String::from_utf8(out).unwrap();
        let line = line.trim_end_matches('\n');
        let theirs: Record<'_> = serde_json::from_str(line).unwrap();
        let fast = super::fast::read(line);
        proptest::prop_assert_eq!(fast.as_ref(), Some(&theirs));
        let mut edited = line.to_owned();
        for (at, what) in edits {
            let mut at = at % (edited.len() + 1);
            while !edited.is_char_boundary(at) {
                at -= 1;
            }
            match EDITS.get(what) {
                Some(text) => edited.insert_str(at, text),
                None if at < edited.len() => {
                    edited.remove(at);
                }
                None => {}
            }
        }
        let serde: Result<Record<'_>, _> = serde_json::from_str(&edited);
        if let Some(fast) = super::fast::read(&edited) {
            let serde = serde.map_err(|e| e.to_string());
            proptest::prop_assert_eq!(Ok(fast), serde, "{}", edited);
        }
    }
}

#[test]
fn stack_runs_are_expanded_on_reading() {
    let mut r = Record {
        stack: vec!["a".into(), "b".into()],
        domains: vec!["".into(), "d".into()],
        stack_runs: vec![2, 3],
        ..Record::default()
    };
    let mut line = Vec::new();
    r.write_json(&mut line);
    let Line::Record(back) = read_line(std::str::from_utf8(&line).unwrap()).unwrap() else {
        panic!("not a record")
    };
    assert_eq!(back.stack, vec!["a", "a", "b", "b", "b"]);
    assert_eq!(back.domains, vec!["", "", "d", "d", "d"]);
    assert!(back.stack_runs.is_empty());
    // name lengths follow their entries
    r.stack_names = vec![1, 0];
    line.clear();
    r.write_json(&mut line);
    let Line::Record(back) = read_line(std::str::from_utf8(&line).unwrap()).unwrap() else {
        panic!("not a record")
    };
    assert_eq!(back.stack_names, vec![1, 1, 0, 0, 0]);
    r.stack_names.clear();
    // counts that do not match the entries are an error, not a guess
    r.stack_runs = vec![1];
    line.clear();
    r.write_json(&mut line);
    assert!(read_line(std::str::from_utf8(&line).unwrap()).is_err());
}

#[test]
fn headers_and_versions() {
    let h = "{\"rprof\":\"dict\",\"version\":1,\"source\":\"nsys\"}";
    assert!(matches!(read_line(h), Ok(Line::Header(_))));
    let future = "{\"rprof\":\"dict\",\"version\":99,\"source\":\"nsys\"}";
    assert!(read_line(future).unwrap_err().contains("newer"));
    assert!(matches!(read_line("  "), Ok(Line::Blank)));
    assert!(read_line("hello").is_err());
    assert!(read_line("{'kShortName': 1}").is_err());
    assert!(read_line("{\"kShortName\": 1}").is_err());
    // evaluation is impossible: this is just an unknown token
    assert!(read_line("{'kShortName': __import__('os').system('x')}").is_err());
}

proptest::proptest! {
    /// Any `dir` text survives both record formats: `fprop` and `bprop`
    /// come back as their variants, every other text as it was written.
    #[test]
    fn dir_text_survives_both_formats(text in arb_cow()) {
        let r = Record {
            dir: Dir::from_text(text.clone()),
            ..Record::default()
        };
        let mut json = Vec::new();
        r.write_json(&mut json);
        let mut pydict = String::new();
        r.write_pydict(&mut pydict);
        for line in [String::from_utf8(json).unwrap(), pydict] {
            let Ok(Line::Record(back)) = read_line(line.trim_end_matches('\n')) else {
                panic!("not read back: {line}")
            };
            proptest::prop_assert_eq!(back.dir.as_str(), text.as_ref());
            proptest::prop_assert_eq!(back.dir.is_fprop(), text == "fprop");
            proptest::prop_assert_eq!(back.dir.is_bprop(), text == "bprop");
        }
    }
}

/// `stackNames` from a hostile file: a negative or fractional length is an
/// error for the line; lengths that do not fit their texts or their count
/// are kept as read and read as no lengths (`rprof_model::stock`'s split
/// readers fall back to the whole text, the op models to the grammar).
#[test]
fn stack_names_from_a_hostile_file() {
    let r = Record {
        stack: vec!["ab, seq = 3".into()],
        stack_names: vec![7],
        ..Record::default()
    };
    let mut good = Vec::new();
    r.write_json(&mut good);
    let good = String::from_utf8(good).unwrap();
    assert!(good.contains("\"stackNames\":[7]"));
    let line = |names: &str| good.replace("\"stackNames\":[7]", &format!("\"stackNames\":{names}"));
    assert!(read_line(&line("[-1]")).is_err());
    assert!(read_line(&line("[1.5]")).is_err());
    assert!(read_line(&line("[4294967296]")).is_err());
    let big = line("[4000000000]");
    let Line::Record(r) = read_line(&big).unwrap() else {
        panic!("not a record")
    };
    assert_eq!(r.stack_names, vec![4_000_000_000]);
    let text = &r.stack[0];
    // a length past the text: the grammar reads it whole
    let m = crate::stock::parse_split(text, r.stack_names[0] as usize);
    assert_eq!((m.name, m.seq), ("ab", Some(3)));
    // inside a character: the same
    assert_eq!(crate::stock::parse_head_split("é, seq = 1", 1).name, "é");
    // a length that fits: the name is taken whole
    let m = crate::stock::parse_split(text, text.len());
    assert_eq!((m.name, m.seq), ("ab, seq = 3", None));
}

/// Values at the edges of what serde reads, in an integer, an optional
/// integer, an unsigned and a float field, and strings with escapes: the
/// fast reader takes the line exactly when serde reads it the same way
/// (hand-listed expectations: which texts it must take), and leaves every
/// other line to serde.
#[test]
fn fast_reader_edge_values() {
    let base = Record {
        short_name: "k".into(),
        duration_ns: 7,
        regs: Some(8),
        tid: 9,
        kineto_occupancy_pct: Some(0.5),
        ..Record::default()
    };
    let mut out = Vec::new();
    base.write_json(&mut out);
    let line = String::from_utf8(out).unwrap();
    let line = line.trim_end();
    // (field as written, replacement, the fast reader must take it)
    let cases: &[(&str, &str, bool)] = &[
        ("\"kDuration\":7", "12", true),
        ("\"kDuration\":7", "-3", true),
        ("\"kDuration\":7", "0", true),
        ("\"kDuration\":7", "-9223372036854775808", true),
        ("\"kDuration\":7", "9223372036854775807", true),
        ("\"kDuration\":7", "9223372036854775808", false),
        ("\"kDuration\":7", "-9223372036854775809", false),
        ("\"kDuration\":7", "-0", false),
        ("\"kDuration\":7", "07", false),
        ("\"kDuration\":7", "7.0", false),
        ("\"kDuration\":7", "7e0", false),
        ("\"kDuration\":7", "7E0", false),
        ("\"kDuration\":7", " 7", false),
        ("\"kDuration\":7", "+7", false),
        ("\"kDuration\":7", "null", false),
        ("\"regs\":8", "null", true),
        ("\"regs\":8", "-0", false),
        ("\"regs\":8", "1.5", false),
        ("\"tid\":9", "18446744073709551615", true),
        ("\"tid\":9", "18446744073709551616", false),
        ("\"tid\":9", "-1", false),
        ("\"kinetoOccupancy\":0.5", "3", true),
        ("\"kinetoOccupancy\":0.5", "-0", true),
        ("\"kinetoOccupancy\":0.5", "1e-400", true),
        ("\"kinetoOccupancy\":0.5", "0.30000000000000004", true),
        ("\"kinetoOccupancy\":0.5", "+1", false),
        ("\"kinetoOccupancy\":0.5", "1.", false),
        (
            "\"kShortName\":\"k\"",
            "\"a\\\"b\\\\c\\u00e9\\ud83d\\ude00\\n\"",
            true,
        ),
        ("\"kShortName\":\"k\"", "\"a\\x\"", false),
        ("\"kShortName\":\"k\"", "\"a\\ud800\"", false),
        ("\"kShortName\":\"k\"", "\"a\u{1}b\"", false),
        ("\"kShortName\":\"k\"", "\"a\u{7f}é\"", true),
        ("\"kShortName\":\"k\"", "\"a\\\\\"", true),
    ];
    for &(field, value, taken) in cases {
        let key = field.split(':').next().unwrap();
        assert!(line.contains(field), "{field}");
        let edited = line.replace(field, &format!("{key}:{value}"));
        let serde: Result<Record<'_>, _> = serde_json::from_str(&edited);
        let fast = super::fast::read(&edited);
        assert_eq!(fast.is_some(), taken, "{field} -> {value}");
        if let Some(fast) = fast {
            assert_eq!(Ok(fast), serde.map_err(|e| e.to_string()), "{value}");
        }
    }
    // keys in another order, an unknown key, a missing key: serde's
    let swapped = line.replacen(
        "\"kShortName\":\"k\",\"kDuration\":7",
        "\"kDuration\":7,\"kShortName\":\"k\"",
        1,
    );
    assert!(super::fast::read(&swapped).is_none());
    assert_eq!(
        serde_json::from_str::<Record<'_>>(&swapped).ok(),
        Some(base.clone())
    );
    let extra = line.replacen('}', ",\"new\":1}", 1);
    assert!(super::fast::read(&extra).is_none());
    let missing = line.replacen(",\"badTime\":false", "", 1);
    assert!(super::fast::read(&missing).is_none());
    for tail in ["x", "}", " ", ","] {
        let trailing = format!("{line}{tail}");
        assert!(super::fast::read(&trailing).is_none(), "{tail:?}");
    }
    assert_eq!(super::fast::read(line), Some(base));
}
