//! The session manager of `skillhost mcp --http`: rmcp's
//! [`LocalSessionManager`], with a shorter path for the most common
//! request, a plain `tools/call`.
//!
//! Through the session worker a request costs several task hand-offs
//! (HTTP task → session worker, twice → serve loop → a handler task → the
//! worker → the HTTP response), about 100 µs on two cores: more than a
//! handler's whole run. A `tools/call` that needs nothing from its session
//! (no `_meta`: no progress token, no per-request protocol metadata) is
//! answered here instead, by the same [`SkillServer::call`] the session's
//! handler would run, as a one-event SSE stream. Everything else, including
//! the session checks and every other message, goes to the inner manager,
//! and rmcp's `StreamableHttpService` keeps doing all the HTTP validation
//! (Host, Origin, Accept, protocol version, session existence) before
//! anything reaches this type.
//!
//! What the session worker would have done for such a call is kept:
//! - `notifications/cancelled` for it ends its stream without an answer
//!   (rmcp drops a cancelled request's response the same way); the run
//!   itself finishes and is recorded, as through the worker.
//!
//! One thing is added for every request, plain or not: a cancel and its
//! request travel on different HTTP requests, so the cancel may arrive
//! first, naming a request no one knows; MCP lets a server ignore it, and
//! rmcp does, which runs a call its client has given up on to the end. A
//! cancel of an unknown request is remembered (briefly, a few per
//! session), and the request it names gets no answer and does not run.
//! - Closing the session ends the streams of its calls still running.
//! - The worker closes a session idle for its `keep_alive`, counting only
//!   what it sees. So that calls answered here keep their session alive,
//!   a call is sent through the worker whenever the worker has seen
//!   nothing of the session for half that time.
//!
//! Server-to-client messages need the worker: such a call has no peer to
//! send them with, and the tools never send any without a progress token.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{Stream, StreamExt};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientJsonRpcMessage, ClientNotification,
    ClientRequest, RequestId, ServerJsonRpcMessage, ServerResult,
};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};
use tokio::sync::oneshot;

use super::SkillServer;

/// How long a call answered here may hold back the response headers.
/// Clients wait for headers with shorter timeouts than for events (the
/// Python SDK: 30 s vs 5 min).
const ANSWER_WITH_HEADERS: Duration = Duration::from_secs(1);

/// Cancels of unknown requests kept per session, and for how long: a
/// cancel overtakes its call by the time one HTTP request takes, and a
/// client never reuses a request ID in a session, so a forgotten one costs
/// at most a call run in vain.
const EARLY_CANCELS: usize = 32;
const EARLY_CANCEL_TTL: Duration = Duration::from_secs(10);

/// [`LocalSessionManager`] that answers plain `tools/call` requests itself.
pub struct DirectCallSessions {
    inner: LocalSessionManager,
    server: SkillServer,
    /// Session ID → what this manager knows of the session.
    sessions: Arc<Mutex<HashMap<SessionId, SessionUse>>>,
    next_call: AtomicU64,
}

#[derive(Debug)]
struct SessionUse {
    /// When the session worker last saw a message of this session.
    seen_by_worker: Instant,
    /// Calls answered here that are still running: request ID → (call
    /// number, where its answer goes). Dropping the sender ends the call's
    /// stream without an answer.
    calls: HashMap<RequestId, (u64, oneshot::Sender<ServerSseMessage>)>,
    /// Cancels of requests not seen yet, oldest first, with when they came.
    early_cancels: VecDeque<(RequestId, Instant)>,
}

impl SessionUse {
    fn new(now: Instant) -> Self {
        SessionUse {
            seen_by_worker: now,
            calls: HashMap::new(),
            early_cancels: VecDeque::new(),
        }
    }

    /// Keeps a cancel of `request`, which has not come (or has ended).
    fn remember_cancel(&mut self, request: RequestId, now: Instant) {
        self.early_cancels
            .retain(|(_, at)| now.saturating_duration_since(*at) < EARLY_CANCEL_TTL);
        if self.early_cancels.len() >= EARLY_CANCELS {
            self.early_cancels.pop_front();
        }
        self.early_cancels.push_back((request, now));
    }

    /// Whether `request` was cancelled before it came; forgets the cancel.
    fn cancelled_early(&mut self, request: &RequestId, now: Instant) -> bool {
        let fresh = |at: &Instant| now.saturating_duration_since(*at) < EARLY_CANCEL_TTL;
        match self
            .early_cancels
            .iter()
            .position(|(r, at)| r == request && fresh(at))
        {
            Some(i) => {
                self.early_cancels.remove(i);
                true
            }
            None => false,
        }
    }
}

/// Whether a call may skip the session worker: only while the worker has
/// seen the session recently enough that its idle timeout (`keep_alive`,
/// `None` for never) is far off.
fn worker_saw_recently(seen: Instant, now: Instant, keep_alive: Option<Duration>) -> bool {
    keep_alive.is_none_or(|k| now.saturating_duration_since(seen) < k / 2)
}

/// The request ID and parameters of a `tools/call` that needs nothing from
/// its session: no `_meta` at all (no progress token, no per-request
/// protocol version for rmcp to check).
fn plain_tool_call(
    message: &ClientJsonRpcMessage,
) -> Option<(&RequestId, &CallToolRequestParams, &rmcp::model::Extensions)> {
    let ClientJsonRpcMessage::Request(request) = message else {
        return None;
    };
    let ClientRequest::CallToolRequest(call) = &request.request else {
        return None;
    };
    // rmcp keeps a request's `_meta` beside its parameters.
    use rmcp::model::{GetExtensions, GetMeta};
    request.request.get_meta().is_empty().then_some((
        &request.id,
        &call.params,
        request.request.extensions(),
    ))
}

/// The request a `notifications/cancelled` names.
fn cancelled_request(message: &ClientJsonRpcMessage) -> Option<&RequestId> {
    let ClientJsonRpcMessage::Notification(n) = message else {
        return None;
    };
    match &n.notification {
        ClientNotification::CancelledNotification(c) => c.params.request_id.as_ref(),
        _ => None,
    }
}

impl DirectCallSessions {
    pub fn new(inner: LocalSessionManager, server: SkillServer) -> Self {
        DirectCallSessions {
            inner,
            server,
            sessions: Arc::new(Mutex::new(HashMap::new())),
            next_call: AtomicU64::new(0),
        }
    }

    /// Sessions open now.
    pub fn open(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, SessionUse>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The inner manager is about to hand the worker a message of `id`.
    fn worker_sees(&self, id: &SessionId) {
        if let Some(s) = self.lock().get_mut(id) {
            s.seen_by_worker = Instant::now();
        }
    }

    /// Starts `params` as call `request` of session `id` if it may skip
    /// the worker; its answer comes on the returned receiver.
    fn start_direct(
        &self,
        id: &SessionId,
        request: &RequestId,
        params: &CallToolRequestParams,
        extensions: &rmcp::model::Extensions,
    ) -> Option<oneshot::Receiver<ServerSseMessage>> {
        let (tx, rx) = oneshot::channel();
        let call = self.next_call.fetch_add(1, Ordering::Relaxed);
        {
            let mut sessions = self.lock();
            let session = sessions.get_mut(id)?;
            let keep_alive = self.inner.session_config.keep_alive;
            if !worker_saw_recently(session.seen_by_worker, Instant::now(), keep_alive) {
                return None;
            }
            // A reused request ID replaces the older call's entry, as in
            // rmcp's own table of running requests.
            session.calls.insert(request.clone(), (call, tx));
        }
        let server = self.server.clone();
        let sessions = self.sessions.clone();
        let (id, request) = (id.clone(), request.clone());
        let (name, args) = (params.name.clone(), params.arguments.clone());
        // Started here, and the rest (if any) spawned, so that the run
        // finishes (and is recorded) even if the client goes away, as a
        // call through the worker does; its place is held as long. Most
        // calls end in this first poll (a handler runs here until its
        // first tick, see `Sandbox::call`), which spares them a task and
        // the wake-up of an idle worker that spawning one costs.
        let place = super::held_place(extensions);
        let call = async move {
            let response = match server.call(&name, args.unwrap_or_default()).await {
                Ok(result) => ServerJsonRpcMessage::response(
                    ServerResult::from(CallToolResponse::from(result)),
                    request.clone(),
                ),
                Err(error) => ServerJsonRpcMessage::error(error, Some(request.clone())),
            };
            // The run is over: free its place before the client hears so,
            // so that its next call finds the place free.
            drop(place);
            let tx = {
                let mut sessions = sessions.lock().unwrap_or_else(|p| p.into_inner());
                sessions.get_mut(&id).and_then(|s| {
                    // A later call that reused the ID owns the entry now.
                    let (n, _) = s.calls.get(&request)?;
                    (*n == call).then(|| s.calls.remove(&request))?
                })
            };
            // No sender: cancelled, or the session closed.
            if let Some((_, tx)) = tx {
                let _ = tx.send(ServerSseMessage::from_message(response));
            }
        };
        if let Err(rest) = crate::types::poll_here_first(call) {
            tokio::spawn(rest);
        }
        Some(rx)
    }
}

impl SessionManager for DirectCallSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.inner.create_session().await?;
        self.lock()
            .insert(id.clone(), SessionUse::new(Instant::now()));
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.worker_sees(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        // Dropping the entry drops the senders of its running calls.
        self.lock().remove(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        if let ClientJsonRpcMessage::Request(r) = &message
            && let Some(session) = self.lock().get_mut(id)
            && session.cancelled_early(&r.id, Instant::now())
        {
            // Its cancel came first: not run, and the stream ends unanswered.
            return Ok(futures::stream::iter(None).left_stream().left_stream());
        }
        if let Some((request, params, extensions)) = plain_tool_call(&message)
            && let Some(mut answer) = self.start_direct(id, request, params, extensions)
        {
            // A quick run's answer goes out with the response headers, in
            // one write; a slow one's headers go first, so that clients
            // waiting for them do not time out.
            let stream = match tokio::time::timeout(ANSWER_WITH_HEADERS, &mut answer).await {
                // `Err`: cancelled, the stream ends with no event.
                Ok(answer) => futures::stream::iter(answer.ok()).left_stream(),
                Err(_) => futures::stream::once(answer)
                    .filter_map(|a| futures::future::ready(a.ok()))
                    .right_stream(),
            };
            return Ok(stream.left_stream());
        }
        self.worker_sees(id);
        let stream = self.inner.create_stream(id, message).await?;
        Ok(stream.right_stream())
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        if let Some(request) = cancelled_request(&message)
            && let Some(session) = self.lock().get_mut(id)
        {
            // Dropping the sender ends that call's stream unanswered. A
            // request not running here may not have come yet (or runs in
            // the worker, or has ended: then the cancel is never used).
            if session.calls.remove(request).is_none() {
                session.remember_cancel(request.clone(), Instant::now());
            }
        }
        // The worker hears it too: a call it runs may carry the same ID.
        self.worker_sees(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.worker_sees(id);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.worker_sees(id);
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        let outcome = self.inner.restore_session(id.clone()).await?;
        if matches!(outcome, RestoreOutcome::Restored(_)) {
            self.lock().insert(id, SessionUse::new(Instant::now()));
        }
        Ok(outcome)
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_skips_the_worker_only_well_within_its_idle_timeout() {
        let seen = Instant::now();
        let k = Some(Duration::from_secs(300));
        assert!(worker_saw_recently(seen, seen, k));
        assert!(worker_saw_recently(
            seen,
            seen + Duration::from_secs(149),
            k
        ));
        assert!(!worker_saw_recently(
            seen,
            seen + Duration::from_secs(150),
            k
        ));
        assert!(!worker_saw_recently(
            seen,
            seen + Duration::from_secs(301),
            k
        ));
        // No idle timeout: the worker never needs to hear of a call.
        assert!(worker_saw_recently(
            seen,
            seen + Duration::from_secs(86_400),
            None
        ));
    }

    fn message(v: serde_json::Value) -> ClientJsonRpcMessage {
        serde_json::from_value(v).expect("a client message")
    }

    #[test]
    fn only_a_tools_call_without_meta_is_plain() {
        let plain = message(serde_json::json!({
            "jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": { "name": "skill_x", "arguments": { "task": "t" } }
        }));
        let (id, params, _) = plain_tool_call(&plain).expect("plain");
        assert_eq!(id, &RequestId::Number(7));
        assert_eq!(params.name, "skill_x");
        let empty_meta = message(serde_json::json!({
            "jsonrpc": "2.0", "id": 8, "method": "tools/call",
            "params": { "name": "skill_x", "_meta": {} }
        }));
        assert!(plain_tool_call(&empty_meta).is_some());
        for not_plain in [
            serde_json::json!({
                "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": { "name": "skill_x", "_meta": { "progressToken": "p" } }
            }),
            serde_json::json!({
                "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": { "name": "skill_x", "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2025-06-18" } }
            }),
            serde_json::json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/list" }),
            serde_json::json!({ "jsonrpc": "2.0", "id": 4, "method": "ping" }),
            serde_json::json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        ] {
            assert!(
                plain_tool_call(&message(not_plain.clone())).is_none(),
                "{not_plain}"
            );
        }
    }

    #[test]
    fn an_early_cancel_is_kept_briefly_and_for_a_few_requests() {
        let now = Instant::now();
        let mut session = SessionUse::new(now);
        let id = |n: i64| RequestId::Number(n);
        session.remember_cancel(id(1), now);
        assert!(!session.cancelled_early(&id(2), now));
        assert!(session.cancelled_early(&id(1), now));
        assert!(!session.cancelled_early(&id(1), now), "used once");

        // Only the latest EARLY_CANCELS are kept.
        for n in 0..(EARLY_CANCELS as i64 + 5) {
            session.remember_cancel(id(100 + n), now);
        }
        assert_eq!(session.early_cancels.len(), EARLY_CANCELS);
        assert!(!session.cancelled_early(&id(100), now));
        assert!(session.cancelled_early(&id(100 + EARLY_CANCELS as i64 + 4), now));

        // And only for EARLY_CANCEL_TTL.
        session.remember_cancel(id(7), now);
        assert!(!session.cancelled_early(&id(7), now + EARLY_CANCEL_TTL));
        let later = now + EARLY_CANCEL_TTL * 2;
        session.remember_cancel(id(8), later);
        assert_eq!(session.early_cancels.len(), 1, "stale cancels are dropped");
    }

    #[test]
    fn a_cancellation_names_its_request() {
        let cancel = message(serde_json::json!({
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": { "requestId": "a", "reason": "user" }
        }));
        assert_eq!(
            cancelled_request(&cancel),
            Some(&RequestId::String("a".into()))
        );
        let other = message(serde_json::json!({
            "jsonrpc": "2.0", "method": "notifications/initialized"
        }));
        assert!(cancelled_request(&other).is_none());
    }
}
