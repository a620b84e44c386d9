//! A generated plan for the 5,000-line lint test and benchmark.

/// A plan of `lines` lines, in blocks of ten: read a mail, loop, branch, send. Every fifth block sends to
/// the mail's sender (certainly denied); the rest are clean or warn.
#[allow(
    dead_code,
    reason = "included by path into a test and a benchmark, not every one of which calls it"
)]
pub fn generated_plan(lines: usize) -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.lines().count() + 10 <= lines {
        s.push_str(&format!(
            "e{i} = get_email(id=\"{i}\")\n\
             n{i} = len(e{i}[\"body\"])\n\
             words{i} = []\n\
             for w in e{i}[\"body\"].split():\n    \
                 words{i}.append(w.lower())\n\
             if n{i} > 3:\n    \
                 log_note(text=\"long\")\n\
             log_note(text=e{i}[\"subject\"])\n\
             send_email(to={}, subject=\"s{i}\", body=\"b\")\n\
             k{i} = {i} * 2\n",
            if i % 5 == 0 {
                format!("e{i}[\"from\"]")
            } else {
                "\"me@example.com\"".to_string()
            }
        ));
        i += 1;
    }
    s
}
