//! The terminal in raw mode and out again. Whatever ends the UI — a normal exit, an error, a
//! panic, Ctrl+C, SIGTERM — leaves the terminal as it was found: raw mode off, cursor shown,
//! alternate screen left, bracketed paste and keyboard enhancements off. A person whose shell
//! is left in raw mode has to know `reset`; nobody should need to.

use crossterm::event::{
    DisableBracketedPaste, EnableBracketedPaste, KeyboardEnhancementFlags,
    PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, BeginSynchronizedUpdate, EndSynchronizedUpdate,
    EnterAlternateScreen, LeaveAlternateScreen,
};
use crossterm::{cursor, execute, queue};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;
use std::io::{self, Stdout, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

pub type Tui = Terminal<CrosstermBackend<Stdout>>;

/// Set while the terminal is ours, so the panic hook and the guard restore it exactly once.
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Whether keyboard enhancements were pushed (they must be popped, and only then).
static ENHANCED: AtomicBool = AtomicBool::new(false);
static PANIC_HOOK: Once = Once::new();

/// Holds the terminal; dropping it restores the terminal.
#[derive(Debug)]
pub struct TerminalGuard {
    pub terminal: Tui,
}

/// Raw mode, alternate screen, bracketed paste; and, where the terminal supports them,
/// keyboard enhancements so Shift+Enter and a lone Esc arrive as themselves.
pub fn enter() -> io::Result<TerminalGuard> {
    install_panic_hook();
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let mut stdout = io::stdout();
    let entered = execute!(
        stdout,
        EnterAlternateScreen,
        EnableBracketedPaste,
        cursor::Hide
    );
    if let Err(err) = entered {
        restore();
        return Err(err);
    }
    // The query answers within a short timeout on terminals that do not know it.
    if matches!(
        crossterm::terminal::supports_keyboard_enhancement(),
        Ok(true)
    ) {
        let flags = KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES
            | KeyboardEnhancementFlags::REPORT_ALTERNATE_KEYS;
        if execute!(stdout, PushKeyboardEnhancementFlags(flags)).is_ok() {
            ENHANCED.store(true, Ordering::SeqCst);
        }
    }
    match Terminal::new(CrosstermBackend::new(stdout)) {
        Ok(terminal) => Ok(TerminalGuard { terminal }),
        Err(err) => {
            restore();
            Err(err)
        }
    }
}

impl TerminalGuard {
    /// Draws one frame inside a synchronised update, so a terminal that supports it shows
    /// the frame whole instead of painting it line by line (no flicker while streaming).
    pub fn draw(&mut self, render: impl FnOnce(&mut ratatui::Frame)) -> io::Result<()> {
        queue!(self.terminal.backend_mut(), BeginSynchronizedUpdate)?;
        let drawn = self.terminal.draw(render).map(|_| ());
        queue!(self.terminal.backend_mut(), EndSynchronizedUpdate)?;
        self.terminal.backend_mut().flush()?;
        drawn
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Puts the terminal back. Safe to call more than once and from the panic hook: only the
/// first call after `enter` does anything. Errors are ignored: there is nowhere left to
/// report them, and each step must still be tried.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut stdout = io::stdout();
    if ENHANCED.swap(false, Ordering::SeqCst) {
        let _ = execute!(stdout, PopKeyboardEnhancementFlags);
    }
    let _ = execute!(
        stdout,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = stdout.flush();
}

/// A panic restores the terminal first, so its message is readable on a sane screen.
fn install_panic_hook() {
    PANIC_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
}
