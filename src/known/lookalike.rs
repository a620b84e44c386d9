//! Placeholder until the look-alike detector lands (same API).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Likeness {
    Confusable,
    MixedScripts,
    NearMiss,
    SameLocalPart,
}
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LookAlike {
    pub known: String,
    pub why: Likeness,
    pub marked: String,
}
pub fn look_alikes<'k>(
    value: &str,
    known: impl IntoIterator<Item = &'k str>,
    max: usize,
) -> Vec<LookAlike> {
    let _ = (value, max);
    known
        .into_iter()
        .take(0)
        .map(|k| LookAlike {
            known: k.into(),
            why: Likeness::NearMiss,
            marked: String::new(),
        })
        .collect()
}
pub fn mark_difference(value: &str, known: &str) -> String {
    format!("[{value}→{known}]")
}
