//! Reading a program's options and operands the way getopt would, so that an option's value
//! is never mistaken for a path (or a path for an option's value).
//!
//! Every table of value-taking options errs one way only: an option wrongly believed to take
//! a value would hide the word after it, which could be the path that matters. So the tables
//! list only options known to take one; an unknown option is read as a flag, and at worst its
//! value is then checked as if it were an operand (a refusal, never a miss). For wrappers,
//! where that value could instead be taken for the wrapped program, [`command_starts`] offers
//! both readings.
//!
//! GNU getopt and git accept any unambiguous prefix of a long option (`--in-pl` for
//! `--in-place`), so [`Args::has`] and [`Args::values`] match prefixes too.

/// Which options of one program take a value.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct OptSpec {
    /// Short options that take the rest of their cluster or else the next word (`-t DIR`).
    pub short: &'static str,
    /// Short options whose value can only be attached (`sed -i.bak`): the next word stays a word.
    pub attached: &'static str,
    /// Long options, without `--`, that take `=value` or else the next word.
    pub long: &'static [&'static str],
    /// Options end at the first operand (wrappers such as `sudo` or `xargs`, whose operands
    /// are a command with options of its own).
    pub stop_at_operand: bool,
}

impl OptSpec {
    pub const fn short(short: &'static str) -> Self {
        Self {
            short,
            attached: "",
            long: &[],
            stop_at_operand: false,
        }
    }

    pub const fn long(mut self, long: &'static [&'static str]) -> Self {
        self.long = long;
        self
    }

    pub const fn attached(mut self, attached: &'static str) -> Self {
        self.attached = attached;
        self
    }

    pub const fn stop_at_operand(mut self) -> Self {
        self.stop_at_operand = true;
        self
    }
}

/// One option as given: `-x` or `--name`, with its value when it takes one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Opt<'a> {
    pub name: String,
    pub value: Option<&'a str>,
}

/// The words after a program name, sorted into options and operands.
#[derive(Debug, Default)]
pub(super) struct Args<'a> {
    pub options: Vec<Opt<'a>>,
    pub operands: Vec<&'a str>,
    /// With [`OptSpec::stop_at_operand`]: index (into the words parsed) of the first operand,
    /// where the wrapped command starts; the number of words when there is none.
    pub rest: usize,
    /// The first operand follows a long option this table does not know, so it may be that
    /// option's value rather than an operand.
    pub maybe_value: bool,
}

impl<'a> Args<'a> {
    /// Parses `words` (the program name already removed).
    pub fn parse(words: &'a [String], spec: &OptSpec) -> Self {
        let mut out = Args {
            rest: words.len(),
            ..Args::default()
        };
        let mut i = 0;
        let mut after_unknown_long = false;
        while i < words.len() {
            let word = words[i].as_str();
            let follows_unknown_long = std::mem::take(&mut after_unknown_long);
            if word == "--" {
                if spec.stop_at_operand {
                    out.rest = i + 1;
                    break;
                }
                out.operands
                    .extend(words[i + 1..].iter().map(String::as_str));
                break;
            }
            if let Some(long) = word.strip_prefix("--") {
                let (name, inline) = match long.split_once('=') {
                    Some((name, value)) => (name, Some(value)),
                    None => (long, None),
                };
                let takes_value = spec
                    .long
                    .iter()
                    .any(|known| abbreviates(word, &format!("--{known}")));
                let value = match inline {
                    Some(value) => Some(value),
                    None if takes_value => {
                        i += 1;
                        words.get(i).map(String::as_str)
                    }
                    None => {
                        after_unknown_long = true;
                        None
                    }
                };
                out.options.push(Opt {
                    name: format!("--{name}"),
                    value,
                });
            } else if let Some(cluster) = word.strip_prefix('-').filter(|c| !c.is_empty()) {
                i = out.cluster(cluster, words, i, spec);
            } else {
                if spec.stop_at_operand {
                    out.rest = i;
                    out.maybe_value = follows_unknown_long;
                    break;
                }
                out.operands.push(word);
            }
            i += 1;
        }
        out
    }

    /// Reads one `-abc` cluster at `words[i]`; returns the index of the last word it used.
    fn cluster(
        &mut self,
        cluster: &'a str,
        words: &'a [String],
        i: usize,
        spec: &OptSpec,
    ) -> usize {
        for (at, c) in cluster.char_indices() {
            let attached = &cluster[at + c.len_utf8()..];
            let name = format!("-{c}");
            if spec.short.contains(c) {
                if attached.is_empty() {
                    let value = words.get(i + 1).map(String::as_str);
                    self.options.push(Opt { name, value });
                    return i + 1;
                }
                self.options.push(Opt {
                    name,
                    value: Some(attached),
                });
                return i;
            }
            if spec.attached.contains(c) {
                let value = (!attached.is_empty()).then_some(attached);
                self.options.push(Opt { name, value });
                return i;
            }
            self.options.push(Opt { name, value: None });
        }
        i
    }

    /// Whether any of `names` (`-x`, `--name`) was given, long ones possibly abbreviated.
    pub fn has(&self, names: &[&str]) -> bool {
        self.options
            .iter()
            .any(|o| names.iter().any(|name| abbreviates(&o.name, name)))
    }

    /// The values given to any of `names`, in order.
    pub fn values<'s>(&'s self, names: &'s [&'s str]) -> impl Iterator<Item = &'a str> + 's {
        self.options
            .iter()
            .filter(move |o| names.iter().any(|name| abbreviates(&o.name, name)))
            .filter_map(|o| o.value)
    }
}

/// Whether the option word `given` names `option`: the same, or a long option's prefix of at
/// least one letter (which the program takes for `option` or rejects as ambiguous).
pub(super) fn abbreviates(given: &str, option: &str) -> bool {
    given == option
        || (given.len() > 2
            && given.starts_with("--")
            && option.starts_with("--")
            && option.starts_with(given))
}

/// Where the command a wrapper runs may start in `words` (the words after the wrapper's
/// name): after its options, and also one word later each time the word there might be the
/// value of a long option the table does not know (`sudo --user root rm`).
pub(super) fn command_starts(words: &[String], spec: &OptSpec) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut offset = 0;
    loop {
        let args = Args::parse(&words[offset..], spec);
        let start = offset + args.rest;
        starts.push(start);
        if !args.maybe_value || start >= words.len() {
            return starts;
        }
        offset = start + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn values_are_taken_from_clusters_next_words_and_equals() {
        let spec = OptSpec::short("tS").long(&["target-directory"]);
        let w = words("-vt /tmp/d a --target-directory=/x --target-directory /y -Sb b");
        let args = Args::parse(&w, &spec);
        assert_eq!(args.operands, ["a", "b"]);
        assert_eq!(
            args.values(&["-t", "--target-directory"])
                .collect::<Vec<_>>(),
            ["/tmp/d", "/x", "/y"]
        );
        assert_eq!(args.values(&["-S"]).collect::<Vec<_>>(), ["b"]);
        assert!(args.has(&["-v"]));
        // An abbreviated long option takes its value like the full one.
        let w = words("--target /dest a");
        let args = Args::parse(&w, &spec);
        assert_eq!(
            args.values(&["--target-directory"]).collect::<Vec<_>>(),
            ["/dest"]
        );
        assert_eq!(args.operands, ["a"]);
    }

    #[test]
    fn attached_values_never_take_the_next_word() {
        let spec = OptSpec::short("e").attached("i");
        let w = words("-ni.bak -e s/a/b/ -i file");
        let args = Args::parse(&w, &spec);
        assert_eq!(args.operands, ["file"]);
        assert_eq!(args.values(&["-i"]).collect::<Vec<_>>(), [".bak"]);
    }

    #[test]
    fn long_options_may_be_abbreviated() {
        let w = words("--in-pl --expr=s/a/b/ f");
        let args = Args::parse(&w, &OptSpec::default());
        assert!(args.has(&["--in-place"]));
        assert_eq!(
            args.values(&["--expression"]).collect::<Vec<_>>(),
            ["s/a/b/"]
        );
        assert!(
            !args.has(&["--input"]),
            "--in-pl does not abbreviate --input"
        );
        assert!(!abbreviates("--", "--output"));
    }

    #[test]
    fn a_wrapped_command_may_start_after_an_unknown_options_value() {
        let spec = OptSpec::short("u").stop_at_operand();
        // `root` may be --user's value, and `rm` --login's.
        let w = words("--user root --login rm -rf x");
        assert_eq!(command_starts(&w, &spec), [1, 3, 5]);
        let w = words("-u root rm");
        assert_eq!(command_starts(&w, &spec), [2]);
    }

    #[test]
    fn double_dash_and_stop_at_operand_end_options() {
        let w = words("-f -- -x y");
        assert_eq!(Args::parse(&w, &OptSpec::default()).operands, ["-x", "y"]);
        let wrapper = OptSpec::short("u").stop_at_operand();
        let w = words("-u root rm -rf x");
        let args = Args::parse(&w, &wrapper);
        assert_eq!(&w[args.rest..], words("rm -rf x").as_slice());
    }
}
