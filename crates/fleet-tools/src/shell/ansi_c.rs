//! `$'…'` strings: bash's backslash escapes, decoded.

/// The value of the text between `$'` and `'`. A NUL ends the string, as in bash.
pub(super) fn decode_ansi_c(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(&e) = chars.get(i) else {
            out.push('\\');
            break;
        };
        i += 1;
        let decoded = match e {
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '?' => Some(e),
            '0'..='7' => {
                let (value, used) = number(&chars[i - 1..], 8, 3);
                i += used - 1;
                char::from_u32(value)
            }
            'x' | 'u' | 'U' => {
                let max = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let (value, used) = number(&chars[i..], 16, max);
                if used == 0 {
                    out.push('\\');
                    out.push(e);
                    continue;
                }
                i += used;
                char::from_u32(value)
            }
            'c' => {
                let Some(&control) = chars.get(i) else {
                    out.push_str("\\c");
                    break;
                };
                i += 1;
                char::from_u32(u32::from(control) & 0x1f)
            }
            other => {
                out.push('\\');
                Some(other)
            }
        };
        match decoded {
            Some('\0') => break,
            Some(c) => out.push(c),
            None => out.push('\u{fffd}'),
        }
    }
    out
}

/// Reads up to `max` digits in `radix`; returns the value and how many were read.
fn number(chars: &[char], radix: u32, max: usize) -> (u32, usize) {
    let mut value: u32 = 0;
    let mut used = 0;
    for c in chars.iter().take(max) {
        match c.to_digit(radix) {
            Some(d) => {
                value = value.saturating_mul(radix).saturating_add(d);
                used += 1;
            }
            None => break,
        }
    }
    (value, used)
}
