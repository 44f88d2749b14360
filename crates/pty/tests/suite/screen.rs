//! The kept screen: a restore brings a fresh terminal to the same state. The check is
//! a round trip: a viewer fed `formatted()` must format to the same bytes again (the
//! format is a function of the state), and read back as the same text.

use weft_pty::Screen;

fn restored(source: &Screen, history: bool) -> Screen {
    let (rows, cols) = source.size();
    let mut view = Screen::new(rows, cols, 1000);
    view.process(&source.formatted(history));
    view
}

fn assert_round_trip(source: &Screen) {
    let view = restored(source, true);
    assert_eq!(view.text(), source.text());
    assert_eq!(
        String::from_utf8_lossy(&view.formatted(true)),
        String::from_utf8_lossy(&source.formatted(true))
    );
}

#[test]
fn colours_attributes_wide_characters_and_the_cursor_survive_a_restore() {
    let mut s = Screen::new(24, 80, 1000);
    s.process(b"\x1b[1;31mbold red\x1b[0m \x1b[3;4;92mitalic underlined bright\x1b[0m\r\n");
    s.process(b"\x1b[38;5;208;48;2;10;20;30m256 on rgb\x1b[7m inverse\x1b[9m struck\x1b[0m\r\n");
    s.process("wide: 日本語, combining: e\u{301}, emoji: 🦀\r\n".as_bytes());
    s.process(b"\x1b[44m   \x1b[0m<- blue blanks\r\n");
    s.process(b"\x1b[10;20H\x1b[32m");
    assert!(s.text().contains("日本語"));
    assert_round_trip(&s);
    // The cursor and the pen carry on: the next output lands at row 10, column 20, green.
    let mut view = restored(&s, true);
    s.process(b"next");
    view.process(b"next");
    assert_eq!(view.formatted(true), s.formatted(true));
    let row = view.text().lines().nth(9).unwrap_or_default().to_string();
    assert_eq!(row, format!("{}next", " ".repeat(19)));
}

#[test]
fn scrollback_comes_back_with_history_and_only_the_screen_without() {
    let mut s = Screen::new(10, 40, 1000);
    for i in 0..100 {
        s.process(format!("line {i}\r\n").as_bytes());
    }
    assert_round_trip(&s);
    let with = restored(&s, true);
    assert_eq!(with.formatted(true), s.formatted(true), "history restored");
    let without = restored(&s, false);
    assert_eq!(without.text(), s.text());
    assert_ne!(without.formatted(true), s.formatted(true), "no history");
}

#[test]
fn input_modes_and_a_hidden_cursor_survive_a_restore() {
    let mut s = Screen::new(24, 80, 100);
    s.process(b"\x1b[?1h\x1b=\x1b[?2004h\x1b[?1000h\x1b[?1006h\x1b[?1004h\x1b[?25l$ ");
    let formatted = String::from_utf8_lossy(&s.formatted(true)).to_string();
    for mode in [
        "\x1b[?1h",
        "\x1b=",
        "\x1b[?2004h",
        "\x1b[?1000h",
        "\x1b[?1006h",
        "\x1b[?1004h",
        "\x1b[?25l",
    ] {
        assert!(formatted.contains(mode), "{mode:?} in {formatted:?}");
    }
    assert_round_trip(&s);
}

#[test]
fn a_wrapped_line_stays_one_line_and_reflows_in_the_viewer() {
    let mut s = Screen::new(24, 80, 100);
    let long = "x".repeat(100);
    s.process(format!("{long}\r\nshort").as_bytes());
    assert_eq!(s.text(), format!("{long}\nshort"));
    let mut view = restored(&s, true);
    view.resize(24, 120);
    assert_eq!(view.text().lines().next(), Some(long.as_str()));
}

#[test]
fn the_alternate_screen_is_restored_as_the_alternate_screen() {
    let mut s = Screen::new(24, 80, 100);
    s.process(b"main text\r\n\x1b[?1049h\x1b[Hfull-screen app");
    assert_eq!(s.text(), "full-screen app");
    let mut view = restored(&s, true);
    assert_eq!(view.text(), "full-screen app");
    view.process(b"\x1b[?1049l");
    assert!(!view.text().contains("full-screen app"));
}

#[test]
fn output_inside_an_unfinished_synchronized_update_is_on_the_screen() {
    let mut s = Screen::new(24, 80, 100);
    s.process(b"\x1b[?2026hdrawn in a synchronized update");
    assert_eq!(s.text(), "drawn in a synchronized update");
}

#[test]
fn a_huge_size_is_held_to_the_limits_and_a_wide_screen_keeps_fewer_lines_of_history() {
    let mut s = Screen::new(u16::MAX, u16::MAX, 10_000);
    assert_eq!(s.size(), (weft_pty::MAX_ROWS, weft_pty::MAX_COLS));
    s.resize(u16::MAX, u16::MAX);
    assert_eq!(s.size(), (weft_pty::MAX_ROWS, weft_pty::MAX_COLS));
    let lines = weft_pty::SCROLLBACK_CELLS / usize::from(weft_pty::MAX_COLS);
    for _ in 0..(lines + 2 * usize::from(weft_pty::MAX_ROWS)) {
        s.process(b"x\r\n");
    }
    assert_eq!(s.history_len(), lines);
    // Back to a usual width: the history asked for is kept again as it comes.
    s.resize(24, 80);
    for _ in 0..12_000 {
        s.process(b"y\r\n");
    }
    assert_eq!(s.history_len(), 10_000);
}
