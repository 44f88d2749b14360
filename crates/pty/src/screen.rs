//! The kept terminal state (alacritty's terminal model): what a viewer that joins
//! late is redrawn from, and what tests read back as text.
//!
//! alacritty_terminal rather than vt100: it parses the same output about 1.4× faster
//! (120 vs 85 MB/s of plain text on one core here), and the screen model is on the
//! path of every byte a child writes.

use std::fmt::Write as _;

use alacritty_terminal::event::VoidListener;
use alacritty_terminal::grid::{Dimensions, Grid};
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::cell::{Cell, Flags};
use alacritty_terminal::term::{Config, Term, TermMode};
use alacritty_terminal::vte::ansi::{Color, NamedColor, Processor};

struct Size {
    rows: usize,
    cols: usize,
}

impl Dimensions for Size {
    fn total_lines(&self) -> usize {
        self.rows
    }
    fn screen_lines(&self) -> usize {
        self.rows
    }
    fn columns(&self) -> usize {
        self.cols
    }
}

/// The most columns a terminal has. The grid holds every cell of the screen (about
/// 24 bytes each) from the start and again at each resize: a client's 65535 × 65535
/// asked for ~100 GB and aborted the daemon. Wider than any real screen at a legible
/// font.
pub const MAX_COLS: u16 = 1000;
/// The most rows a terminal has (see [`MAX_COLS`]).
pub const MAX_ROWS: u16 = 500;
/// The most cells the scrollback keeps (~48 MB): a wide terminal keeps fewer lines of
/// history than asked for, so one terminal's memory stays bounded whatever its width.
pub const SCROLLBACK_CELLS: usize = 2_000_000;

/// A terminal's state: the grid with its scrollback, the cursor and the input modes.
pub struct Screen {
    term: Term<VoidListener>,
    parser: Processor,
    /// The lines of history asked for (fewer are kept when wide).
    scrollback: usize,
    /// The lines of history kept at the current width.
    kept_lines: usize,
}

/// A size within the limits: zero is taken as one, more than the most as the most.
fn bounded(rows: u16, cols: u16) -> Size {
    Size {
        rows: usize::from(rows.clamp(1, MAX_ROWS)),
        cols: usize::from(cols.clamp(1, MAX_COLS)),
    }
}

/// The lines of history kept at `cols` columns.
fn history(scrollback: usize, cols: usize) -> usize {
    scrollback.min(SCROLLBACK_CELLS / cols.max(1))
}

impl Screen {
    /// An empty terminal of `rows` × `cols` keeping `scrollback` lines of history (at
    /// most [`SCROLLBACK_CELLS`] cells of it). Zero dimensions are taken as one, more
    /// than [`MAX_ROWS`] or [`MAX_COLS`] as that.
    pub fn new(rows: u16, cols: u16, scrollback: usize) -> Screen {
        let size = bounded(rows, cols);
        let kept_lines = history(scrollback, size.cols);
        let config = Config {
            scrolling_history: kept_lines,
            ..Config::default()
        };
        Screen {
            term: Term::new(config, &size, VoidListener),
            parser: Processor::new(),
            scrollback,
            kept_lines,
        }
    }

    /// Feeds output from the child.
    pub fn process(&mut self, bytes: &[u8]) {
        self.parser.advance(&mut self.term, bytes);
        // A synchronized update (DEC mode 2026) is held back for a renderer to show
        // at once; this state is read at arbitrary offsets, so it applies every byte.
        if self.parser.sync_bytes_count() > 0 {
            self.parser.stop_sync(&mut self.term);
        }
    }

    /// Resizes (text reflows as in a real terminal), within the limits of [`Screen::new`].
    pub fn resize(&mut self, rows: u16, cols: u16) {
        let size = bounded(rows, cols);
        let lines = history(self.scrollback, size.cols);
        if lines != self.kept_lines {
            // Before the resize: a wider grid then reflows into the shorter history.
            self.term.set_options(Config {
                scrolling_history: lines,
                ..Config::default()
            });
            self.kept_lines = lines;
        }
        self.term.resize(size);
    }

    /// How many lines of history the screen holds now.
    pub fn history_len(&self) -> usize {
        self.term.grid().history_size()
    }

    /// (rows, columns).
    pub fn size(&self) -> (u16, u16) {
        let grid = self.term.grid();
        (
            u16::try_from(grid.screen_lines()).unwrap_or(u16::MAX),
            u16::try_from(grid.columns()).unwrap_or(u16::MAX),
        )
    }

    /// The visible screen as text: a line per row with trailing blanks dropped (but
    /// kept up to the cursor, so a prompt such as `name? ` keeps its space), a row the
    /// terminal wrapped joined to the next, trailing empty lines dropped.
    pub fn text(&self) -> String {
        let grid = self.term.grid();
        let cursor = grid.cursor.point;
        let mut out = String::new();
        for line in 0..grid.screen_lines() {
            let line = Line(i32::try_from(line).unwrap_or(i32::MAX));
            let (mut end, full) = extent(grid, line);
            if !full && line == cursor.line {
                end = end.max(cursor.column.0);
            }
            for col in 0..end {
                push_cell(&mut out, &grid[line][Column(col)]);
            }
            if !full {
                out.push('\n');
            }
        }
        let kept = out.trim_end_matches('\n').len();
        out.truncate(kept);
        out
    }

    /// Escape codes that bring a fresh terminal of the same size to this state: the
    /// scrollback (when `history`), the screen with its colours and attributes, the
    /// cursor, the current pen and the input modes (cursor keys, keypad, bracketed
    /// paste, mouse and focus reporting).
    pub fn formatted(&self, history: bool) -> Vec<u8> {
        let grid = self.term.grid();
        let mode = *self.term.mode();
        // With history the viewer is made this terminal from nothing: a full reset
        // (RIS) clears its scrollback too. Without, only the screen is redrawn.
        let mut out = String::from(if history {
            "\x1bc"
        } else {
            "\x1b[0m\x1b[H\x1b[2J"
        });
        if mode.contains(TermMode::ALT_SCREEN) {
            out.push_str("\x1b[?1049h\x1b[H\x1b[2J");
        }
        let first = if history && !mode.contains(TermMode::ALT_SCREEN) {
            -i32::try_from(grid.history_size()).unwrap_or(0)
        } else {
            0
        };
        let last = i32::try_from(grid.screen_lines()).unwrap_or(1) - 1;
        let mut pen = Pen::default();
        for line in first..=last {
            let line = Line(line);
            let (end, full) = extent(grid, line);
            for col in 0..end {
                let cell = &grid[line][Column(col)];
                if cell
                    .flags
                    .intersects(Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER)
                {
                    continue;
                }
                pen.switch(&mut out, Pen::of(cell));
                push_cell(&mut out, cell);
            }
            // A wrapped row runs on into the next one by the terminal's own wrap, so
            // the viewer marks it wrapped too and reflows it on resize.
            if !full && line.0 < last {
                pen.switch(&mut out, Pen::default());
                out.push_str("\r\n");
            }
        }
        let cursor = grid.cursor.point;
        let _ = write!(out, "\x1b[{};{}H", cursor.line.0 + 1, cursor.column.0 + 1);
        pen.switch(&mut out, Pen::of(&grid.cursor.template));
        for (flag, on) in [
            (TermMode::APP_CURSOR, "\x1b[?1h"),
            (TermMode::APP_KEYPAD, "\x1b="),
            (TermMode::BRACKETED_PASTE, "\x1b[?2004h"),
            (TermMode::MOUSE_REPORT_CLICK, "\x1b[?1000h"),
            (TermMode::MOUSE_DRAG, "\x1b[?1002h"),
            (TermMode::MOUSE_MOTION, "\x1b[?1003h"),
            (TermMode::UTF8_MOUSE, "\x1b[?1005h"),
            (TermMode::SGR_MOUSE, "\x1b[?1006h"),
            (TermMode::FOCUS_IN_OUT, "\x1b[?1004h"),
            (TermMode::INSERT, "\x1b[4h"),
        ] {
            if mode.contains(flag) {
                out.push_str(on);
            }
        }
        if !mode.contains(TermMode::LINE_WRAP) {
            out.push_str("\x1b[?7l");
        }
        if !mode.contains(TermMode::SHOW_CURSOR) {
            out.push_str("\x1b[?25l");
        }
        out.into_bytes()
    }
}

/// How much of a row to draw, and whether the terminal wrapped it into the next row
/// (then all of it is drawn, so the viewer wraps it too).
fn extent(grid: &Grid<Cell>, line: Line) -> (usize, bool) {
    let wrapped = grid[line][grid.last_column()]
        .flags
        .contains(Flags::WRAPLINE);
    if wrapped {
        (grid.columns(), true)
    } else {
        (content_end(grid, line), false)
    }
}

/// One past the last column that shows anything (a glyph, or a colour or attribute
/// that is visible on a blank).
fn content_end(grid: &Grid<Cell>, line: Line) -> usize {
    let row = &grid[line];
    (0..grid.columns())
        .rev()
        .find(|&col| {
            let cell = &row[Column(col)];
            cell.c != ' '
                || cell.bg != Color::Named(NamedColor::Background)
                || cell
                    .flags
                    .intersects(Flags::INVERSE | Flags::ALL_UNDERLINES | Flags::STRIKEOUT)
        })
        .map_or(0, |col| col + 1)
}

fn push_cell(out: &mut String, cell: &Cell) {
    if cell
        .flags
        .intersects(Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER)
    {
        return;
    }
    out.push(if cell.c == '\0' { ' ' } else { cell.c });
    if let Some(marks) = cell.zerowidth() {
        out.extend(marks);
    }
}

/// The attributes a cell is drawn with.
#[derive(Clone, Copy, PartialEq)]
struct Pen {
    fg: Color,
    bg: Color,
    flags: Flags,
}

const STYLE: Flags = Flags::BOLD
    .union(Flags::DIM)
    .union(Flags::ITALIC)
    .union(Flags::ALL_UNDERLINES)
    .union(Flags::INVERSE)
    .union(Flags::HIDDEN)
    .union(Flags::STRIKEOUT);

impl Default for Pen {
    fn default() -> Pen {
        Pen {
            fg: Color::Named(NamedColor::Foreground),
            bg: Color::Named(NamedColor::Background),
            flags: Flags::empty(),
        }
    }
}

impl Pen {
    fn of(cell: &Cell) -> Pen {
        Pen {
            fg: cell.fg,
            bg: cell.bg,
            flags: cell.flags & STYLE,
        }
    }

    /// Writes the SGR that turns `self` into `next` (a reset, then what `next` has).
    fn switch(&mut self, out: &mut String, next: Pen) {
        if *self == next {
            return;
        }
        out.push_str("\x1b[0");
        for (flag, code) in [
            (Flags::BOLD, ";1"),
            (Flags::DIM, ";2"),
            (Flags::ITALIC, ";3"),
            (Flags::UNDERLINE, ";4"),
            (Flags::DOUBLE_UNDERLINE, ";4:2"),
            (Flags::UNDERCURL, ";4:3"),
            (Flags::DOTTED_UNDERLINE, ";4:4"),
            (Flags::DASHED_UNDERLINE, ";4:5"),
            (Flags::INVERSE, ";7"),
            (Flags::HIDDEN, ";8"),
            (Flags::STRIKEOUT, ";9"),
        ] {
            if next.flags.contains(flag) {
                out.push_str(code);
            }
        }
        color(out, next.fg, 30, 90, 38);
        color(out, next.bg, 40, 100, 48);
        out.push('m');
        *self = next;
    }
}

fn color(out: &mut String, color: Color, base: u8, bright: u8, extended: u8) {
    let _ = match color {
        Color::Spec(rgb) => write!(out, ";{extended};2;{};{};{}", rgb.r, rgb.g, rgb.b),
        Color::Indexed(i) => write!(out, ";{extended};5;{i}"),
        Color::Named(named) => match named as usize {
            i @ 0..=7 => write!(out, ";{}", usize::from(base) + i),
            i @ 8..=15 => write!(out, ";{}", usize::from(bright) + i - 8),
            _ => match dim_base(named) {
                Some(i) => write!(out, ";{}", base + i),
                // The default foreground/background: nothing to say after a reset.
                None => Ok(()),
            },
        },
    };
}

fn dim_base(named: NamedColor) -> Option<u8> {
    Some(match named {
        NamedColor::DimBlack => 0,
        NamedColor::DimRed => 1,
        NamedColor::DimGreen => 2,
        NamedColor::DimYellow => 3,
        NamedColor::DimBlue => 4,
        NamedColor::DimMagenta => 5,
        NamedColor::DimCyan => 6,
        NamedColor::DimWhite => 7,
        _ => return None,
    })
}
