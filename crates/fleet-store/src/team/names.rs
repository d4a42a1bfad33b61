//! The rules for team names and member names.
//!
//! A member name becomes an inbox file name and part of an agent id (`name@team`), and a team
//! name becomes a folder, so both are checked before they touch a path. Member names follow
//! Claude Code's rule so teams move between the two tools.

use super::error::TeamError;

/// Names that address something other than a teammate (`main` is the lead's conversation,
/// `team-lead` the lead's inbox, `user` a person, `system` fleet itself).
pub const RESERVED_MEMBER_NAMES: &[&str] = &["main", "team-lead", "user", "system"];

const MAX_MEMBER_NAME: usize = 64;
const MAX_TEAM_NAME: usize = 128;
const MAX_SLUG: usize = 48;

/// Checks a teammate name: `^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`, not a reserved name (any case),
/// and not shaped like a session id. The error says what is allowed.
pub fn validate_member_name(name: &str) -> Result<(), TeamError> {
    let refuse = |reason: &str| {
        Err(TeamError::InvalidMemberName {
            name: name.to_string(),
            reason: reason.to_string(),
        })
    };
    let allowed = "use 1 to 64 letters, digits, '-' or '_', starting with a letter or digit";
    let mut chars = name.chars();
    match chars.next() {
        None => return refuse(&format!("the name is empty; {allowed}")),
        Some(first) if !first.is_ascii_alphanumeric() => {
            return refuse(&format!("it must start with a letter or digit; {allowed}"))
        }
        Some(_) => {}
    }
    if name.len() > MAX_MEMBER_NAME {
        return refuse(&format!("it is {} characters long; {allowed}", name.len()));
    }
    if let Some(bad) = chars.find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_')) {
        return refuse(&format!("{bad:?} is not allowed; {allowed}"));
    }
    if let Some(reserved) = RESERVED_MEMBER_NAMES
        .iter()
        .find(|r| r.eq_ignore_ascii_case(name))
    {
        return refuse(&format!(
            "{reserved:?} is reserved (main, team-lead, user and system address the lead, a \
             person and fleet); pick another name"
        ));
    }
    if looks_like_uuid(name) {
        return refuse("it looks like a session id; pick a name a person can read");
    }
    Ok(())
}

/// Checks a team name used to find a folder: 1 to 128 of `[A-Za-z0-9._-]`, starting with a
/// letter or digit (so never `.`, `..` or a hidden name), and not a deleted team's folder.
pub fn validate_team_name(team: &str) -> Result<(), TeamError> {
    let ok = team.len() <= MAX_TEAM_NAME
        && team
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && team
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !team.contains(".deleted-");
    if ok {
        Ok(())
    } else {
        Err(TeamError::InvalidTeamName {
            team: team.to_string(),
        })
    }
}

/// A folder-safe team name from what the caller wanted: lowercase ASCII letters, digits and
/// single dashes, at most 48 characters; `team` when nothing usable is left.
pub fn slugify(wanted: &str) -> String {
    let mut slug = String::with_capacity(wanted.len());
    for c in wanted.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug: String = slug.trim_matches('-').chars().take(MAX_SLUG).collect();
    let slug = slug.trim_end_matches('-');
    if slug.is_empty() {
        "team".to_string()
    } else {
        slug.to_string()
    }
}

/// `8-4-4-4-12` hex digits.
fn looks_like_uuid(name: &str) -> bool {
    let groups: Vec<&str> = name.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, len)| g.len() == len && g.chars().all(|c| c.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_member_names_pass() {
        for name in ["alpha", "Beta-2", "a", "x_y", &"a".repeat(64)] {
            assert!(validate_member_name(name).is_ok(), "{name}");
        }
    }

    #[test]
    fn bad_member_names_say_what_is_allowed() {
        for (name, says) in [
            ("", "empty"),
            ("-x", "start with a letter"),
            ("al pha", "' ' is not allowed"),
            ("alpha@team", "'@' is not allowed"),
            ("../x", "start with a letter"),
            (&"a".repeat(65), "65 characters"),
            ("MAIN", "reserved"),
            ("team-lead", "reserved"),
            ("System", "reserved"),
            ("3f2c1a9e-1b2c-4d5e-8f90-0123456789ab", "session id"),
        ] {
            let err = validate_member_name(name).expect_err(name).to_string();
            assert!(err.contains(says), "{name}: {err}");
        }
    }

    #[test]
    fn team_names_cannot_leave_the_teams_folder() {
        for team in ["session-1a2b3c4d", "my-team-2", "a.b_c"] {
            assert!(validate_team_name(team).is_ok(), "{team}");
        }
        for team in ["", ".", "..", "../x", "a/b", ".hidden", "x.deleted-123"] {
            assert!(validate_team_name(team).is_err(), "{team}");
        }
    }

    #[test]
    fn slugs_are_lowercase_dashed_and_never_empty() {
        assert_eq!(slugify("My Team!"), "my-team");
        assert_eq!(slugify("  --Release  2.0--  "), "release-2-0");
        assert_eq!(slugify("日本"), "team");
        assert_eq!(slugify(""), "team");
        assert_eq!(slugify(&"ab ".repeat(40)).len(), 47);
    }
}
