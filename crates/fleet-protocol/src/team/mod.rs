//! Teams: the words teammates exchange. A mailbox entry ([`MailEntry`]) is what one member
//! leaves in another's inbox; its `text` is plain prose or a protocol frame
//! ([`frames`]) serialized as compact JSON, as Claude Code writes them, so the files read the
//! same to users of both tools.

pub mod event;
pub mod frames;
pub mod mail;
pub mod parse;
pub mod render;

pub use event::{MemberSummary, TeamEvent};
pub use frames::Frame;
pub use mail::{MailEntry, MAIL_VERSION};
pub use render::TeammateMessage;
