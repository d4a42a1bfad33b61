//! The team of a session: its config file, its members in this process, their mailboxes, and
//! the events a consumer sees.
//!
//! A session has at most one team at a time. It is made at the first teammate (the implicit
//! team, `session-<8 hex of the session id>`) or by TeamCreate, and found again by its lead
//! session id when the session is resumed.

use super::mate::{Mate, MateState};
use super::roster_error::RosterError;
use super::{clock, TeamSettings, COLORS, LEAD_NAME};
use crate::sink::EventSink;
use fleet_protocol::{EventKind, MailEntry, TeamEvent};
use fleet_store::tasklist::TaskList;
use fleet_store::team::{Member, MemberStatus, TeamConfig, TeamStore};
use fleet_store::Mailbox;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// The session's team, once there is one.
#[derive(Debug)]
pub struct Teams {
    pub settings: TeamSettings,
    pub(crate) store: TeamStore,
    current: Mutex<Option<Arc<Team>>>,
    sink: EventSink,
    /// The socket this session listens on, written into its team's file.
    socket: Mutex<Option<String>>,
    ledger: Arc<crate::ledger::Ledger>,
    /// Ends the socket's accept loop: fired by [`Teams::stop_listening`], and when the
    /// session's teams are dropped.
    pub(crate) listening: tokio_util::sync::CancellationToken,
    /// Team mail the lead's transcript says it read (a resumed session).
    lead_delivered: Mutex<Arc<std::collections::HashSet<String>>>,
    /// Set when this session is a pane teammate of a team another session leads.
    membership: std::sync::OnceLock<Arc<super::member::Membership>>,
}

impl Drop for Teams {
    fn drop(&mut self) {
        self.listening.cancel();
    }
}

impl Teams {
    pub fn new(
        settings: TeamSettings,
        sink: EventSink,
        ledger: Arc<crate::ledger::Ledger>,
    ) -> Self {
        Self {
            store: TeamStore::new(&settings.home),
            settings,
            current: Mutex::new(None),
            sink,
            socket: Mutex::new(None),
            ledger,
            listening: tokio_util::sync::CancellationToken::new(),
            lead_delivered: Mutex::default(),
            membership: std::sync::OnceLock::new(),
        }
    }

    /// The team this session is a pane teammate of, if it is one.
    pub fn membership(&self) -> Option<&Arc<super::member::Membership>> {
        self.membership.get()
    }

    pub(crate) fn set_membership(
        &self,
        member: Arc<super::member::Membership>,
    ) -> Result<(), RosterError> {
        self.membership
            .set(member)
            .map_err(|_| RosterError::AlreadyJoined)
    }

    pub(crate) fn set_lead_delivered(&self, ids: std::collections::HashSet<String>) {
        *lock(&self.lead_delivered) = Arc::new(ids);
    }

    pub(crate) fn lead_delivered(&self) -> Arc<std::collections::HashSet<String>> {
        lock(&self.lead_delivered).clone()
    }

    /// Stops taking messages from other sessions (the session is ending): the socket's
    /// accept loop ends and the listener closes.
    pub fn stop_listening(&self) {
        self.listening.cancel();
    }

    /// Records the socket this session listens on, in the team file too.
    pub fn set_socket(&self, path: &std::path::Path) {
        let path = path.display().to_string();
        *lock(&self.socket) = Some(path);
        if let Some(team) = self.current() {
            self.record_socket(&team);
        }
    }

    fn record_socket(&self, team: &Team) {
        let socket = lock(&self.socket).clone();
        if socket.is_none() {
            return;
        }
        if let Err(err) = self
            .store
            .update(&team.name, |config| config.socket = socket)
        {
            tracing::warn!(team = %team.name, "cannot record the session's socket: {err}");
        }
    }

    /// The team, if one exists.
    pub fn current(&self) -> Option<Arc<Team>> {
        lock(&self.current).clone()
    }

    /// The team, made implicitly (`session-<sid8>`) when there is none yet.
    pub fn get_or_create(&self, cwd: &std::path::Path) -> Result<Arc<Team>, RosterError> {
        let sid8: String = self.settings.session_id.chars().take(8).collect();
        // Checked and made under one lock: two teammates started in one reply (their Agent
        // calls run side by side) must land in one team.
        self.make(&format!("session-{sid8}"), None, cwd, true)
    }

    /// Makes a team with the main agent as lead. Fails when the session already leads one.
    pub fn create(
        &self,
        wanted: &str,
        description: Option<&str>,
        cwd: &std::path::Path,
    ) -> Result<Arc<Team>, RosterError> {
        self.make(wanted, description, cwd, false)
    }

    /// The team `wanted`, made now unless the session already leads one: then that team when
    /// `reuse`, else an error.
    fn make(
        &self,
        wanted: &str,
        description: Option<&str>,
        cwd: &std::path::Path,
        reuse: bool,
    ) -> Result<Arc<Team>, RosterError> {
        let mut current = lock(&self.current);
        if let Some(team) = &*current {
            if reuse {
                return Ok(team.clone());
            }
            return Err(RosterError::AlreadyLeads {
                team: team.name.clone(),
            });
        }
        let lead = Member::new(LEAD_NAME, wanted, LEAD_NAME, &cwd.display().to_string());
        let config = self
            .store
            .create(wanted, description, lead, &self.settings.session_id)
            .map_err(RosterError::Create)?;
        let team = Arc::new(Team::open(self, config)?);
        *current = Some(team.clone());
        drop(current);
        self.record_socket(&team);
        self.claim_lead(&team);
        team.emit_sync(TeamEvent::TeamCreated {
            team: team.name.clone(),
            lead_agent_id: team.lead_agent_id(),
        });
        Ok(team)
    }

    /// Finds the team this session led before (a resumed session), and takes it up again.
    pub fn restore(&self) -> Result<Option<Arc<Team>>, RosterError> {
        let teams = self.store.list().map_err(RosterError::List)?;
        let Some(config) = teams
            .into_iter()
            .find(|t| t.lead_session_id == self.settings.session_id)
        else {
            return Ok(None);
        };
        let team = Arc::new(Team::open(self, config)?);
        *lock(&self.current) = Some(team.clone());
        self.record_socket(&team);
        self.claim_lead(&team);
        Ok(Some(team))
    }

    /// Opens the team `name` another session leads, as one of its members (a pane teammate's
    /// session): its files, inboxes and task list, without making or claiming anything.
    pub fn join(&self, name: &str) -> Result<Arc<Team>, RosterError> {
        let config = self.store.load(name).map_err(|source| RosterError::Join {
            team: name.to_string(),
            source,
        })?;
        let team = Arc::new(Team::open(self, config)?);
        *lock(&self.current) = Some(team.clone());
        Ok(team)
    }

    /// Writes this process into the team file as its lead (`leadProcess`, Claude Code's
    /// field), so pane teammates and `fleet team list` can tell when the lead is gone, and
    /// marks the lead active (a resumed session's lead was stopped).
    fn claim_lead(&self, team: &Team) {
        let pid = std::process::id();
        let claimed = self.store.update(&team.name, |config| {
            config.extra.insert(
                "leadProcess".into(),
                serde_json::json!({"pid": pid, "claimedAt": clock::now_ms()}),
            );
            if let Some(lead) = config.members.iter_mut().find(|m| m.name == LEAD_NAME) {
                lead.status = MemberStatus::Active;
            }
        });
        if let Err(err) = claimed {
            tracing::warn!(team = %team.name, "cannot record the lead's process: {err}");
        }
    }

    /// Marks the lead stopped in the team file: the session that leads the team is ending
    /// (however it ends: done, an error, an interrupt). Not for a pane teammate's session,
    /// which does not lead the team it is in.
    pub(crate) fn lead_ended(&self, team: &Team) {
        if self.membership().is_none() {
            team.set_status(LEAD_NAME, MemberStatus::Stopped);
        }
    }

    /// Forgets the team (TeamDelete), after its members were shut down.
    pub(crate) fn clear(&self) -> Option<Arc<Team>> {
        lock(&self.current).take()
    }
}

/// One team, as this process runs it.
#[derive(Debug)]
pub struct Team {
    pub name: String,
    pub(crate) store: TeamStore,
    pub(crate) tasks: TaskList,
    pub(crate) lead_mailbox: Mailbox,
    inboxes: std::path::PathBuf,
    mates: Mutex<BTreeMap<String, Arc<Mate>>>,
    /// Counts changes (a member's state, mail), for whoever waits for the team to go quiet:
    /// a waiter notes the count before it looks, so no change between looking and sleeping is
    /// missed.
    activity: tokio::sync::watch::Sender<u64>,
    colors: AtomicUsize,
    sink: EventSink,
    pub(crate) settings: TeamSettings,
    /// Set when a lead poller runs for this team.
    pub(crate) poller: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Team events sync code raised, waiting for their turn on the stream (see
    /// [`Team::emit_sync`]).
    outbox: Arc<Outbox>,
    /// The session's ledger: a member's life shows in the tree's figures.
    pub(crate) ledger: Arc<crate::ledger::Ledger>,
}

impl Team {
    fn open(teams: &Teams, config: TeamConfig) -> Result<Self, RosterError> {
        let inboxes = teams.store.inboxes_dir(&config.name);
        let lead_mailbox = Mailbox::open(&inboxes, LEAD_NAME).map_err(RosterError::LeadInbox)?;
        let tasks =
            TaskList::open(&teams.settings.home, &config.name).map_err(RosterError::TaskList)?;
        let used = config
            .members
            .iter()
            .filter(|m| m.name != LEAD_NAME)
            .count();
        Ok(Self {
            name: config.name,
            store: teams.store.clone(),
            tasks,
            lead_mailbox,
            inboxes,
            mates: Mutex::new(BTreeMap::new()),
            activity: tokio::sync::watch::Sender::new(0),
            colors: AtomicUsize::new(used),
            sink: teams.sink.clone(),
            settings: teams.settings.clone(),
            poller: Mutex::new(None),
            outbox: Arc::default(),
            ledger: teams.ledger.clone(),
        })
    }

    /// Records a change in the team.
    pub(crate) fn poke(&self) {
        self.activity.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// The change count now.
    pub fn version(&self) -> u64 {
        *self.activity.borrow()
    }

    /// Returns once the count differs from `seen`.
    pub async fn changed_since(&self, seen: u64) {
        let mut rx = self.activity.subscribe();
        loop {
            if *rx.borrow_and_update() != seen {
                return;
            }
            if rx.changed().await.is_err() {
                return std::future::pending().await;
            }
        }
    }

    pub fn lead_agent_id(&self) -> String {
        format!("{LEAD_NAME}@{}", self.name)
    }

    pub fn config(&self) -> Result<TeamConfig, RosterError> {
        self.store
            .load(&self.name)
            .map_err(|source| RosterError::Read {
                team: self.name.clone(),
                source,
            })
    }

    /// The next teammate color.
    pub(crate) fn next_color(&self) -> String {
        let n = self.colors.fetch_add(1, Ordering::Relaxed);
        COLORS[n % COLORS.len()].to_string()
    }

    pub(crate) fn mailbox(&self, member: &str) -> Result<Mailbox, RosterError> {
        Mailbox::open(&self.inboxes, member).map_err(|source| RosterError::Inbox {
            member: member.to_string(),
            source,
        })
    }

    pub fn mate(&self, name: &str) -> Option<Arc<Mate>> {
        let name = name
            .strip_suffix(&format!("@{}", self.name))
            .unwrap_or(name);
        lock(&self.mates).get(name).cloned()
    }

    pub fn mates(&self) -> Vec<Arc<Mate>> {
        lock(&self.mates).values().cloned().collect()
    }

    pub(crate) fn remove_mate(&self, name: &str) {
        lock(&self.mates).remove(name);
    }

    /// Adds a member unless one of that name is there already (two Agent calls with one
    /// name in one reply); `false` then.
    pub(crate) fn add_mate(&self, mate: Arc<Mate>) -> bool {
        let mut mates = lock(&self.mates);
        if mates.contains_key(&mate.name) {
            return false;
        }
        mates.insert(mate.name.clone(), mate);
        true
    }

    /// Writes `entry` into `to`'s inbox (durably) and says so on the event stream. What the
    /// lead writes to a pane teammate is signed with that teammate's key. For sync code: the
    /// locked, fsynced append runs with the async worker's other tasks moved elsewhere
    /// ([`off_worker`]); async code calls [`post_async`](Self::post_async).
    pub(crate) fn post(&self, to: &str, entry: &MailEntry) -> Result<(), RosterError> {
        let (mailbox, entry, pane_mate) = self.addressed(to, entry)?;
        off_worker(|| mailbox.append(&entry)).map_err(|source| RosterError::Deliver {
            to: to.to_string(),
            source,
        })?;
        self.posted(to, &entry, pane_mate);
        Ok(())
    }

    /// [`post`](Self::post) with the append on tokio's blocking pool.
    pub(crate) async fn post_async(&self, to: &str, entry: &MailEntry) -> Result<(), RosterError> {
        let (mailbox, entry, pane_mate) = self.addressed(to, entry)?;
        mailbox
            .append_async(entry.clone())
            .await
            .map_err(|source| RosterError::Deliver {
                to: to.to_string(),
                source,
            })?;
        self.posted(to, &entry, pane_mate);
        Ok(())
    }

    /// The inbox `entry` goes to, the entry as written (signed for a pane teammate), and the
    /// pane teammate it is for, if it is for one.
    fn addressed(
        &self,
        to: &str,
        entry: &MailEntry,
    ) -> Result<(Mailbox, MailEntry, Option<Arc<Mate>>), RosterError> {
        let mailbox = if to == LEAD_NAME {
            self.lead_mailbox.clone()
        } else {
            self.mailbox(to)?
        };
        let pane_mate = (to != LEAD_NAME)
            .then(|| self.mate(to))
            .flatten()
            .filter(|m| m.pane.is_some());
        let mut entry = entry.clone();
        if let Some(link) = pane_mate.as_ref().and_then(|m| m.pane.as_ref()) {
            if super::signing::needs_signature(&entry.from) {
                link.key.sign(&mut entry);
            }
        }
        Ok((mailbox, entry, pane_mate))
    }

    /// What follows a delivered entry: the pane teammate's state, the team's activity, the
    /// event.
    fn posted(&self, to: &str, entry: &MailEntry, pane_mate: Option<Arc<Mate>>) {
        // A pane teammate reads it in a turn of its own, and says when that turn is over.
        if let Some(mate) = pane_mate.filter(|m| m.state() == MateState::Idle) {
            mate.set_state(self, MateState::Busy);
        }
        self.poke();
        let text = match fleet_protocol::team::Frame::parse(&entry.text) {
            Some(frame) => frame.type_name().to_string(),
            None => entry.text.clone(),
        };
        self.emit_sync(TeamEvent::TeamMessage {
            team: self.name.clone(),
            from: entry.from.clone(),
            to: to.to_string(),
            summary: entry.summary.clone(),
            text,
        });
    }

    /// Updates one member's record in the team file; a failure is logged, since the file is
    /// a view of what runs here, not what decides it.
    pub(crate) fn update_member(&self, name: &str, change: impl FnOnce(&mut Member)) {
        let result = self.store.update(&self.name, |config| {
            if let Some(member) = config.members.iter_mut().find(|m| m.name == name) {
                change(member);
            }
        });
        if let Err(err) = result {
            tracing::warn!(team = %self.name, member = name, "cannot update the team file: {err}");
        }
    }

    pub(crate) fn set_status(&self, name: &str, status: MemberStatus) {
        self.update_member(name, |m| m.status = status);
        self.poke();
    }

    /// Whether any member is working or has mail to read, or the lead has mail it has not
    /// taken in: while so, a headless session waits instead of ending.
    pub fn busy(&self) -> bool {
        if self.lead_mailbox.pending().unwrap_or(0) > 0 {
            return true;
        }
        self.mates().iter().any(|mate| match mate.state() {
            MateState::Busy => true,
            MateState::Idle => mate.has_mail(),
            MateState::Stopped => false,
        })
    }

    /// Emits a team event on the session's stream without waiting (called from sync code).
    /// It is queued, and sent by a task after what was queued before it: the stream shows
    /// team events in the order they happened (a teammate's `shutdown_approved` before its
    /// `teammate_terminated`), which a task spawned per event would not promise.
    pub(crate) fn emit_sync(&self, event: TeamEvent) {
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            tracing::debug!("team event outside a runtime: {event:?}");
            return;
        };
        lock(&self.outbox.queue).push_back(event);
        let outbox = self.outbox.clone();
        let sink = self.sink.clone();
        handle.spawn(async move {
            let _turn = outbox.sending.lock().await;
            outbox.drain(&sink).await;
        });
    }

    /// Emits a team event on the session's stream, after every event queued before it.
    pub(crate) async fn emit(&self, event: TeamEvent) {
        let _turn = self.outbox.sending.lock().await;
        self.outbox.drain(&self.sink).await;
        self.sink.emit(EventKind::Team(event)).await;
    }

    pub fn now() -> String {
        clock::now_iso()
    }
}

/// Team events on their way to the stream, oldest first. Whoever holds `sending` is the one
/// sender: it sends what is queued before anything of its own.
#[derive(Debug, Default)]
struct Outbox {
    queue: Mutex<std::collections::VecDeque<TeamEvent>>,
    sending: tokio::sync::Mutex<()>,
}

impl Outbox {
    /// Sends every queued event, in order (the caller holds `sending`).
    async fn drain(&self, sink: &EventSink) {
        loop {
            let next = lock(&self.queue).pop_front();
            match next {
                Some(event) => sink.emit(EventKind::Team(event)).await,
                None => return,
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Runs a blocking call (a mailbox's locked, fsynced write) from sync code. On a worker
/// thread of a multi-threaded runtime, the worker's other tasks move to another thread
/// meanwhile (`block_in_place`), so a slow disk or a lock held by another process stalls only
/// the caller; anywhere else (a current-thread runtime, a plain thread) it just runs.
pub(crate) fn off_worker<T>(call: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(call)
        }
        _ => call(),
    }
}
