//! The window's size, kept in `<state_dir>/window.json` and given back to the next
//! window. The window reports its size as it changes (debounced), so the size survives
//! a crash or a killed app, not only a clean close.

use std::path::Path;

const FILE: &str = "window.json";
/// Sizes outside these bounds (logical pixels) are not kept: the window's minimum (see
/// tauri.conf.json) and a sanity ceiling.
const MIN: (f64, f64) = (720.0, 480.0);
const MAX: f64 = 16384.0;

fn valid(width: f64, height: f64) -> bool {
    width.is_finite()
        && height.is_finite()
        && (MIN.0..=MAX).contains(&width)
        && (MIN.1..=MAX).contains(&height)
}

/// The last size kept, if any and sane.
pub fn load(state_dir: &Path) -> Option<(f64, f64)> {
    let text = std::fs::read_to_string(state_dir.join(FILE)).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let (w, h) = (v.get("width")?.as_f64()?, v.get("height")?.as_f64()?);
    valid(w, h).then_some((w, h))
}

/// Keeps `width` x `height`; a size out of bounds is refused.
pub fn save(state_dir: &Path, width: f64, height: f64) -> Result<(), String> {
    if !valid(width, height) {
        return Err(format!("{width}x{height} is not a window size to keep"));
    }
    let tmp = state_dir.join(format!("{FILE}.tmp"));
    let text = serde_json::json!({ "width": width.round(), "height": height.round() }).to_string();
    std::fs::write(&tmp, text).map_err(|e| e.to_string())?;
    std::fs::rename(&tmp, state_dir.join(FILE)).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_a_sane_size_and_refuses_others() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(load(dir.path()), None);
        assert!(save(dir.path(), 1100.4, 700.0).is_ok());
        assert_eq!(load(dir.path()), Some((1100.0, 700.0)));
        assert!(save(dir.path(), 100.0, 700.0).is_err());
        assert!(save(dir.path(), f64::NAN, 700.0).is_err());
        assert_eq!(load(dir.path()), Some((1100.0, 700.0)));
        std::fs::write(dir.path().join(FILE), r#"{"width": 5, "height": 5}"#)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(load(dir.path()), None);
    }
}
