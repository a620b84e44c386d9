//! The plan front end end to end: a plan using every allowed construct passes; each refused construct
//! is reported with its code at a position counted by hand; hostile input never panics.

use zamburak::plan::{self, Diagnostic, Signatures, line_col};

fn sigs() -> Signatures {
    let mut s = Signatures::default();
    s.tools.insert(
        "send_email".into(),
        vec!["to".into(), "subject".into(), "body".into()],
    );
    s.tools.insert("read_inbox".into(), vec!["folder".into()]);
    s.verifiers.insert("verify_recipient".into());
    s
}

const EVERYTHING: &str = r#"import json
import re

mails = read_inbox(folder="INBOX")
count = 0
count += 1
a, b = 1, 2
[c, d] = [3, 4]
table = {"k": 1}
table["k"] = 2
if (n := len(mails)) > 0:
    pass
elif n == 0:
    pass
else:
    pass
for m in mails:
    if m is None:
        continue
    if m in table or not m:
        break
while count < 3 and True:
    count = count + 1 - 1 * 2 / 1 // 1 ** 1
    count = -count if count != 0 else +count
    bits = ~7 & 3 | 1 ^ 2 << 1 >> 1
    rem = 7 % 3
    break

def helper(x, y=2):
    return x + y

square = lambda v: v * v
nums = [i for i in range(10) if i % 2 == 0]
evens = {i for i in nums}
index = {i: str(i) for i in nums}
total = sum(i for i in nums)
ok = 0 < total <= 100
text = f"total {total:>5} of {len(nums)!r}"
fmt = "{} {}".format(a, b)
piece = nums[1:3] + nums[::2] + nums[:-1]
nothing = None
flt = 1.5e3
tpl = (1, 2)
print(len(nums), str(1), int("2"), float("3"), bool(0), list(reversed(nums)))
print(sorted(nums, key=lambda v: -v, reverse=True), min(nums), max(nums, key=square))
print(any(nums), all(nums), list(enumerate(nums)), list(zip(nums, nums)))
print(list(map(square, nums)), list(filter(helper, nums)), dict(a=1), set(nums), tuple(nums))
print(abs(-1), round(1.25, 1), helper(1), square(2))
s = " Hello "
s2 = s.lower().upper().strip().lstrip().rstrip().title()
parts = s.split(",") + s.rsplit(",", 1) + s.splitlines()
joined = ",".join(parts).replace("a", "b")
flags = [s.startswith("H"), s.endswith("o"), s.find("l"), s.count("l"), s.partition(" ")]
lst = [3, 1, 2]
lst.append(4)
lst.extend([5])
lst.insert(0, 6)
lst.pop()
lst.remove(6)
lst.index(1)
lst.count(1)
lst.sort()
lst.reverse()
lst2 = lst.copy()
table.get("k")
table.keys()
table.values()
table.items()
table.update({"j": 2})
table.pop("j")
table.setdefault("z", 0)
table2 = table.copy()
st = {1}
st.add(2)
st.discard(2)
st.remove(1)
st = st.union({3}).intersection({3}).difference({4})
data = json.loads(json.dumps({"a": [1, 2]}))
hit = re.search("a", "abc")
if hit:
    print(hit.group(0))
re.match("a", "a")
re.fullmatch("a", "a")
re.findall("a", "aa")
re.sub("a", "b", "aa")
re.split(",", "a,b")
who = verify_recipient("bob@example.com")
send_email(who, "subject", body=f"{count} mails")
send_email(to=who, subject="s", body="b")
"#;

#[test]
fn every_allowed_construct_passes() {
    match plan::check(EVERYTHING, &sigs()) {
        Ok(p) => assert_eq!(p.source, EVERYTHING),
        Err(d) => panic!("{}", plan::render(&d, EVERYTHING, "everything.py")),
    }
}

fn diags(src: &str) -> Vec<Diagnostic> {
    plan::check(src, &sigs()).expect_err("plan must be rejected")
}

/// (plan, code, line, column) — columns are 1-based character positions counted by hand.
const REJECTED: &[(&str, &str, u32, u32)] = &[
    ("x = (\n", "Z001", 2, 1),
    ("x = 1\ntry:\n    pass\nexcept E:\n    pass\n", "Z010", 2, 1),
    ("raise ValueError\n", "Z010", 1, 1),
    ("x = 1\nassert x\n", "Z010", 2, 1),
    ("with x:\n    pass\n", "Z010", 1, 1),
    ("class A:\n    pass\n", "Z010", 1, 1),
    ("def f():\n    global g\n", "Z010", 2, 5),
    ("x = 1\ndel x\n", "Z010", 2, 1),
    ("match 1:\n    case 1:\n        pass\n", "Z010", 1, 1),
    ("x: int = 1\n", "Z010", 1, 1),
    (
        "for i in range(2):\n    pass\nelse:\n    pass\n",
        "Z010",
        4,
        5,
    ),
    ("async def f():\n    pass\n", "Z010", 1, 1),
    ("def f():\n    yield 1\n", "Z011", 2, 5),
    ("x = b'abc'\n", "Z011", 1, 5),
    ("x = ...\n", "Z011", 1, 5),
    ("x = 1j\n", "Z011", 1, 5),
    ("x = [(y := 1) for z in range(3)]\n", "Z011", 1, 7),
    ("x = eval('1')\n", "Z012", 1, 5),
    ("x = 1\nv = getattr(x, 'y')\n", "Z012", 2, 5),
    ("t = type(1)\n", "Z012", 1, 5),
    ("x = 'a'\ny = x.encode()\n", "Z013", 2, 7),
    ("import json\nj = json.load(x)\n", "Z013", 2, 5),
    ("x = 'a'\ny = x.real\n", "Z014", 2, 5),
    ("import os\n", "Z015", 1, 8),
    ("from json import loads\n", "Z015", 1, 1),
    ("import json as j\n", "Z015", 1, 16),
    ("def f():\n    import re\n", "Z015", 2, 5),
    ("x = json.dumps(1)\n", "Z015", 1, 5),
    ("_x = 1\n", "Z016", 1, 1),
    ("x = 'a'\ny = x.__class__\n", "Z016", 2, 7),
    ("print(1, _sep=2)\n", "Z016", 1, 10),
    ("x = 'a%s' % 1\n", "Z017", 1, 5),
    ("@dec\ndef f():\n    pass\n", "Z018", 1, 1),
    ("def f(*a):\n    pass\n", "Z019", 1, 7),
    ("x = [1]\nprint(*x)\n", "Z019", 2, 7),
    ("x = {}\ny = {**x}\n", "Z019", 2, 8),
    ("sendmail(1)\n", "Z101", 1, 1),
    ("send_email(to=1, subject=2, bdy=3)\n", "Z102", 1, 29),
    ("x = 1\nsend_email(to=x, subject=x)\n", "Z103", 2, 1),
    ("send_email(1, 2, 3, 4)\n", "Z104", 1, 21),
    ("send_email(1, 2, 3, to=4)\n", "Z105", 1, 21),
    ("v = verify_recipient('a', 'b')\n", "Z106", 1, 5),
    ("f = send_email\n", "Z107", 1, 5),
    ("len = 3\n", "Z108", 1, 1),
    ("for json in range(2):\n    pass\n", "Z108", 1, 5),
    ("def f(x):\n    return await x\n", "Z011", 2, 12),
    ("f = lambda a=1: a\n", "Z011", 1, 14),
    ("x = 1\ny = x @ x\n", "Z011", 2, 5),
    ("def f(a, /, b):\n    pass\n", "Z011", 1, 7),
    ("import re\np = re.compile('a')\n", "Z013", 2, 5),
    ("for _ in range(2):\n    pass\n", "Z016", 1, 5),
    ("x = {}\nx.y = 1\n", "Z014", 2, 1),
    ("x = '{0.__class__}'.format(1)\n", "Z014", 1, 5),
    ("x = [1]\na, *b = x\n", "Z019", 2, 4),
    ("x = f'{1}' % 2\n", "Z017", 1, 5),
    ("x = 1\ny = x + <DEEP>1\n", "Z002", 2, 1),
];

#[test]
fn each_rejected_construct_has_its_code_and_position() {
    for (src, code, line, col) in REJECTED {
        let src = &src.replace("<DEEP>", &"-".repeat(300));
        let d = diags(src);
        let hit = d.iter().find(|d| d.code == *code).unwrap_or_else(|| {
            panic!(
                "{src:?}: expected {code}, got {:?}",
                d.iter().map(|d| d.code).collect::<Vec<_>>()
            )
        });
        assert_eq!(line_col(src, hit.start), (*line, *col), "{src:?} {code}");
        assert!(
            hit.end >= hit.start && hit.end <= src.len(),
            "{src:?}: bad span"
        );
    }
}

#[test]
fn every_code_is_documented() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/diagnostics.md"))
        .expect("docs/diagnostics.md exists");
    for (_, code, _, _) in REJECTED {
        assert!(doc.contains(&format!("## {code}")), "{code} undocumented");
    }
    assert!(doc.contains("## Z002"));
}

#[test]
fn hostile_input_is_diagnosed_without_panicking() {
    let nested = format!("x = {}1{}\n", "[".repeat(1000), "]".repeat(1000));
    let big = "x = 1\n".repeat(2 * 1024 * 1024 / 6 + 1);
    let cases: Vec<(String, &str)> = vec![
        ("x = 1\0\n".into(), "Z001"),
        ("\0\0\0".into(), "Z001"),
        ("(".repeat(100_000), "Z002"),
        (nested, "Z002"),
        (big, "Z002"),
        (format!("x = {}1\n", "not ".repeat(100_000)), "Z002"),
        (format!("x = {}1\n", "-".repeat(100_000)), "Z002"),
    ];
    for (src, code) in &cases {
        let d = diags(src);
        assert_eq!(d[0].code, *code, "{:?}", &src[..src.len().min(30)]);
        let out = plan::render(&d, src, "hostile.py");
        assert!(out.contains(&format!("error[{code}]")));
        assert!(!out.contains('\0'));
    }
}

#[test]
fn render_shows_line_and_carets() {
    let src = "x = 1\ny = eval('2')\n";
    let out = plan::render(&diags(src), src, "plan.py");
    assert!(out.starts_with("error[Z012]: "), "{out}");
    assert!(out.contains(" --> plan.py:2:5\n"), "{out}");
    assert!(out.contains("2 | y = eval('2')\n"), "{out}");
    assert!(out.contains("  |     ^^^^\n"), "{out}");
    assert!(out.contains("  = help: "), "{out}");
}

#[test]
fn unknown_tool_hint_names_the_nearest_tool() {
    let d = diags("send_emial(to=1, subject=2, body=3)\n");
    assert_eq!(d[0].code, "Z101");
    assert_eq!(d[0].hint.as_deref(), Some("did you mean `send_email`?"));
}

/// The bundled examples are written against the bundled default policy; the attack example is refused by
/// the policy at run time, not by the front end, so all three must pass the check.
#[test]
fn bundled_examples_pass_against_the_default_policy() {
    let policy = zamburak::policy::Policy::bundled_default().expect("default policy loads");
    let sigs = policy.signatures();
    for name in ["triage.py", "summary.py", "attack.py"] {
        let path = format!("{}/examples/{name}", env!("CARGO_MANIFEST_DIR"));
        let src = std::fs::read_to_string(&path).expect("example exists");
        if let Err(d) = plan::check(&src, &sigs) {
            panic!("{}", plan::render(&d, &src, name));
        }
    }
}

#[test]
fn diagnostics_are_capped() {
    let src = "_x = 1\n".repeat(10_000);
    let d = diags(&src);
    assert_eq!(d.len(), plan::MAX_DIAGNOSTICS);
    assert_eq!(line_col(&src, d[99].start), (100, 1));
}
