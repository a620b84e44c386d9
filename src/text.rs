//! Text from outside (tool data, server messages, names from mail headers) made safe to show on a terminal:
//! every character that would act instead of being read, or would hide or reorder what is read, is written
//! as a visible escape.

/// Text for a terminal with every control character (C0, DEL, C1 such as a lone CSI) and every invisible
/// format character that reorders or hides text (bidi overrides and isolates, zero-width marks, BOM)
/// written as `\u{..}`, so what the approver reads is what would be sent.
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let hidden = c.is_control()
            || ('\u{200b}'..='\u{200f}').contains(&c)
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c)
            || c == '\u{feff}';
        if hidden {
            out.push_str(&format!("\\u{{{:04x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Plan output for a terminal: like [`visible`], but a line break stays a line break (a plan prints lines).
pub fn visible_lines(text: &str) -> String {
    text.split('\n').map(visible).collect::<Vec<_>>().join("\n")
}
