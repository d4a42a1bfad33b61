//! `--output-format stream-json`: one JSON object per line, written and flushed as each event
//! happens, for every agent of the session (verbose or not) — except the main agent's
//! `result` lines, which all come at the end (see `results.rs` for why).

use super::encode::Encoder;
use super::{subagent_messages_wanted, write_json_line, PrintOptions, Printer};
use fleet_protocol::wire::{SessionStateLine, SessionStateName, StreamLine, SystemLine};
use fleet_protocol::AgentEvent;
use std::io::{self, Write};

pub struct StreamJsonPrinter {
    out: Box<dyn Write + Send>,
    encoder: Encoder,
    results_as_they_come: bool,
    /// An `idle` state line waiting for the held results: a reader takes `idle` as "nothing
    /// more comes", so it never precedes a result.
    idle: Option<SessionStateLine>,
}

impl StreamJsonPrinter {
    pub fn new(out: Box<dyn Write + Send>, options: &PrintOptions) -> Self {
        Self {
            out,
            encoder: Encoder::new(options.session_id.clone(), options.include_partial_messages)
                .with_hook_events(options.include_hook_events)
                .with_session_state(options.session_state)
                .with_subagent_messages(subagent_messages_wanted()),
            results_as_they_come: options.results_as_they_come,
            idle: None,
        }
    }
}

impl Printer for StreamJsonPrinter {
    fn event(&mut self, event: &AgentEvent) -> io::Result<()> {
        for line in self.encoder.encode(event) {
            match line {
                StreamLine::System(SystemLine::SessionStateChanged(state))
                    if state.state == SessionStateName::Idle && !self.results_as_they_come =>
                {
                    self.idle = Some(state);
                }
                line => write_json_line(&mut self.out, &line)?,
            }
        }
        if self.results_as_they_come {
            for result in self.encoder.take_results() {
                write_json_line(&mut self.out, &StreamLine::from(result))?;
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        for line in self.encoder.release_held() {
            write_json_line(&mut self.out, &line)?;
        }
        for result in self.encoder.take_results() {
            write_json_line(&mut self.out, &StreamLine::from(result))?;
        }
        if let Some(idle) = self.idle.take() {
            write_json_line(&mut self.out, &StreamLine::from(idle))?;
        }
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::super::fixtures::*;
    use super::*;
    use fleet_protocol::{ContentBlock, EventKind, PermissionNote, ResultSubtype, ToolResultEvent};
    use serde_json::{json, Value};

    #[test]
    fn the_final_tree_totals_replace_those_of_the_last_result() {
        let mut result = run_result(ResultSubtype::Success, "done");
        result.tree = Some(fleet_protocol::TreeReport {
            total_cost_usd: 1.0,
            ..Default::default()
        });
        let mut totals = fleet_protocol::TreeReport {
            total_cost_usd: 2.5,
            ..Default::default()
        };
        totals.subagent_stats.killed.user = 1;
        let lines = print_stream(
            &[
                main_event(EventKind::Finished(result)),
                main_event(EventKind::TreeTotals(totals)),
            ],
            &PrintOptions::default(),
        );
        assert_eq!(lines.len(), 1, "the totals print no line of their own");
        assert_eq!(lines[0]["total_cost_usd"], 2.5);
        assert_eq!(lines[0]["subagent_stats"]["killed"]["user"], 1);
    }

    #[test]
    fn with_stream_json_input_each_result_prints_when_its_run_ends() {
        let buf = SharedBuf::default();
        let options = PrintOptions {
            results_as_they_come: true,
            ..PrintOptions::default()
        };
        let mut printer = StreamJsonPrinter::new(Box::new(buf.clone()), &options);
        printer
            .event(&main_event(EventKind::Finished(run_result(
                ResultSubtype::Success,
                "first",
            ))))
            .unwrap();
        let lines = buf.json_lines();
        assert_eq!(lines.len(), 1, "printed before finish");
        assert_eq!(lines[0]["result"], "first");
        printer
            .event(&main_event(EventKind::Finished(run_result(
                ResultSubtype::Success,
                "second",
            ))))
            .unwrap();
        printer.finish().unwrap();
        let lines = buf.json_lines();
        assert_eq!(lines.len(), 2, "each result once");
        assert_eq!((lines[1]["result_index"].as_u64()), Some(1));
    }

    fn is_uuid(v: &Value) -> bool {
        uuid::Uuid::parse_str(v.as_str().unwrap()).is_ok()
    }

    #[test]
    fn terminal_controls_json_leaves_raw_are_escaped_and_the_value_kept() {
        let hostile = "\u{1b}]52;c;eA==\u{7}\u{9b}2J\u{202e}\u{7f}";
        let buf = SharedBuf::default();
        let options = PrintOptions {
            verbose: true,
            ..PrintOptions::default()
        };
        let mut printer = StreamJsonPrinter::new(Box::new(buf.clone()), &options);
        for event in [
            main_event(started()),
            main_event(block("msg_1", ContentBlock::text(hostile), 10)),
        ] {
            printer.event(&event).unwrap();
        }
        printer.finish().unwrap();
        let text = buf.text();
        assert!(!crate::visible::has_hidden_controls(&text), "{text:?}");
        let lines = buf.json_lines();
        let said = lines.iter().find(|l| l["type"] == "assistant").unwrap();
        assert_eq!(said["message"]["content"][0]["text"], hostile);
    }

    #[test]
    fn basic_session_prints_the_reference_lines_in_order() {
        let lines = print_stream(&basic_session(), &PrintOptions::default());
        let shapes: Vec<(String, String)> = lines
            .iter()
            .map(|l| {
                let kind = l["type"].as_str().unwrap().to_string();
                let detail = match kind.as_str() {
                    "system" | "result" => l["subtype"].as_str().unwrap().to_string(),
                    _ => l["message"]["content"][0]["type"]
                        .as_str()
                        .unwrap()
                        .to_string(),
                };
                (kind, detail)
            })
            .collect();
        let expected = [
            ("system", "init"),
            ("assistant", "text"),
            ("assistant", "tool_use"),
            ("user", "tool_result"),
            ("assistant", "tool_use"),
            ("user", "tool_result"),
            ("assistant", "tool_use"),
            ("user", "tool_result"),
            ("assistant", "text"),
            ("result", "success"),
        ];
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert_eq!(shapes, expected);
        for line in &lines {
            assert_eq!(line["session_id"], SESSION, "{line}");
            assert!(is_uuid(&line["uuid"]), "{line}");
        }
        let uuids: std::collections::HashSet<_> =
            lines.iter().map(|l| l["uuid"].to_string()).collect();
        assert_eq!(uuids.len(), lines.len(), "a fresh uuid per line");
    }

    #[test]
    fn init_has_the_reference_keys_and_no_claude_only_ones() {
        let lines = print_stream(&basic_session(), &PrintOptions::default());
        let init = &lines[0];
        assert_eq!(
            keys(init),
            [
                "type",
                "subtype",
                "cwd",
                "session_id",
                "tools",
                "mcp_servers",
                "model",
                "permissionMode",
                "additional_directories",
                "agents",
                "skills",
                "fleet_version",
                "claude_code_version",
                "uuid"
            ]
        );
        assert_eq!(init["cwd"], "/home/user/project");
        assert_eq!(init["tools"], json!(["Bash", "Edit", "Read"]));
        assert_eq!(init["mcp_servers"], json!([]));
        assert_eq!(init["permissionMode"], "acceptEdits");
        assert_eq!(init["fleet_version"], env!("CARGO_PKG_VERSION"));
    }

    #[test]
    fn assistant_lines_repeat_the_envelope_with_one_block() {
        let lines = print_stream(&basic_session(), &PrintOptions::default());
        let text = &lines[1];
        assert_eq!(
            keys(text),
            [
                "type",
                "message",
                "parent_tool_use_id",
                "session_id",
                "uuid",
                "timestamp"
            ]
        );
        assert_eq!(
            text["message"],
            json!({
                "id": "msg_1", "type": "message", "role": "assistant", "model": MODEL,
                "content": [{ "type": "text", "text": "Reading the file." }],
                "stop_reason": null, "stop_sequence": null,
                "usage": { "input_tokens": 12470, "output_tokens": 1 },
            })
        );
        assert_eq!(text["parent_tool_use_id"], Value::Null);
        let stamp = text["timestamp"].as_str().unwrap();
        assert!(humantime::parse_rfc3339(stamp).is_ok(), "{stamp}");
        assert_eq!(stamp.len(), "2026-11-30T13:28:18.909Z".len(), "{stamp}");
        let read = &lines[2]["message"]["content"][0];
        assert_eq!(
            read,
            &json!({
                "type": "tool_use", "id": "toolu_r1", "name": "Read",
                "input": { "file_path": "/home/user/project/hello.txt" },
            })
        );
    }

    #[test]
    fn tool_results_carry_structured_result_and_permission_meta() {
        let lines = print_stream(&basic_session(), &PrintOptions::default());
        let read = &lines[3];
        assert_eq!(
            keys(read),
            [
                "type",
                "message",
                "parent_tool_use_id",
                "session_id",
                "uuid",
                "timestamp",
                "tool_use_result",
                "tool_result_meta"
            ]
        );
        assert_eq!(
            read["message"],
            json!({ "role": "user", "content": [{
                "tool_use_id": "toolu_r1", "type": "tool_result",
                "content": "1\thello world\n2\t", "is_error": false,
            }]})
        );
        assert_eq!(read["tool_use_result"]["file"]["numLines"], 2);
        assert_eq!(
            read["tool_result_meta"],
            json!([{ "id": "toolu_r1", "permission_decision": {
                "decision": "accept", "source": "config", "reason_type": "mode",
            }}])
        );
        assert_eq!(lines[7]["tool_use_result"]["stdout"], "hello fleet");
    }

    #[test]
    fn tool_result_without_structured_detail_omits_the_key_and_names_the_rule() {
        let event = main_event(EventKind::ToolResult(ToolResultEvent {
            tool_use_id: "toolu_x".into(),
            tool_name: "Bash".into(),
            content: "Permission to run `rm -rf /` was denied by a rule.".into(),
            is_error: true,
            structured: None,
            permission: PermissionNote {
                decision: fleet_protocol::PermissionDecision::Reject,
                reason_type: fleet_protocol::PermissionReasonType::Rule,
                rule: Some("Bash(rm:*)".into()),
            },
        }));
        let lines = print_stream(&[event], &PrintOptions::default());
        assert!(lines[0].get("tool_use_result").is_none());
        assert_eq!(lines[0]["message"]["content"][0]["is_error"], true);
        assert_eq!(
            lines[0]["tool_result_meta"][0]["permission_decision"],
            json!({ "decision": "reject", "source": "config", "reason_type": "rule",
                    "rule": "Bash(rm:*)" })
        );
    }

    #[test]
    fn result_line_has_the_reference_fields() {
        let lines = print_stream(&basic_session(), &PrintOptions::default());
        let result = lines.last().unwrap();
        assert_eq!(
            keys(result),
            [
                "type",
                "subtype",
                "is_error",
                "duration_ms",
                "duration_api_ms",
                "num_turns",
                "result",
                "stop_reason",
                "session_id",
                "total_cost_usd",
                "usage",
                "modelUsage",
                "permission_denials",
                "api_error_status",
                "terminal_reason",
                "result_index",
                "uuid"
            ]
        );
        assert_eq!(result["result_index"], 0);
        assert_eq!(result["is_error"], false);
        assert_eq!(result["result"], "DONE: hello fleet");
        assert_eq!(result["num_turns"], 4);
        assert_eq!(result["stop_reason"], "end_turn");
        assert_eq!(result["api_error_status"], Value::Null);
        assert_eq!(result["terminal_reason"], "completed");
        assert_eq!(
            result["usage"],
            json!({ "input_tokens": 50363, "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0, "output_tokens": 40,
                    "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
                    "service_tier": "standard",
                    "cache_creation": {"ephemeral_1h_input_tokens": 0,
                                       "ephemeral_5m_input_tokens": 0} })
        );
        assert_eq!(
            result["modelUsage"][MODEL],
            json!({ "inputTokens": 50363, "outputTokens": 40, "cacheReadInputTokens": 0,
                    "cacheCreationInputTokens": 0, "costUSD": 0.202252,
                    "contextWindow": 1000000, "maxOutputTokens": 128000 })
        );
        assert_eq!(result["permission_denials"], json!([]));
    }

    #[test]
    fn error_result_lists_the_message_in_errors() {
        let mut r = run_result(
            ResultSubtype::ErrorDuringExecution,
            "API error 529: Overloaded",
        );
        r.api_error_status = Some(529);
        let lines = print_stream(
            &[main_event(EventKind::Finished(r))],
            &PrintOptions::default(),
        );
        // As in Claude Code: a synthetic message carries the error, then the result is a
        // `success` that is an error, ended by `api_error`.
        let said = &lines[0];
        assert_eq!(said["type"], "assistant");
        assert_eq!(said["message"]["model"], "<synthetic>");
        assert_eq!(
            said["message"]["content"][0]["text"],
            "API error 529: Overloaded"
        );
        assert_eq!(said["error"], "overloaded");
        assert_eq!(said["is_api_error_message"], true);
        assert_eq!(said["api_error_status"], 529);
        let result = &lines[1];
        assert_eq!(result["subtype"], "success");
        assert_eq!(result["is_error"], true);
        assert_eq!(result["api_error_status"], 529);
        assert_eq!(result["terminal_reason"], "api_error");
        assert_eq!(result["errors"], json!(["API error 529: Overloaded"]));
    }

    #[test]
    fn subagent_lines_carry_parent_and_label_and_start_and_end_print_nothing() {
        let events = [
            sub_event(started()),
            sub_event(block("msg_3", ContentBlock::text("CHILD-RESULT-42"), 7299)),
            sub_event(tool_result("toolu_c1", "Read", "ok", None)),
            sub_event(EventKind::Finished(run_result(
                ResultSubtype::Success,
                "CHILD-RESULT-42",
            ))),
        ];
        let lines = print_stream(&events, &PrintOptions::default());
        assert_eq!(
            lines.len(),
            2,
            "only the block and the tool result: {lines:?}"
        );
        assert_eq!(lines[0]["type"], "assistant");
        assert_eq!(lines[1]["type"], "user");
        for line in &lines {
            assert_eq!(&keys(line)[2..4], ["parent_tool_use_id", "agent_id"]);
            assert_eq!(&keys(line)[7..9], ["subagent_type", "task_description"]);
            assert_eq!(line["parent_tool_use_id"], "toolu_bg1");
            assert_eq!(line["agent_id"], CHILD);
            assert_eq!(line["subagent_type"], "general-purpose");
            assert_eq!(line["task_description"], "background job");
        }
    }

    #[test]
    fn a_subagent_without_a_label_gets_no_label_keys() {
        let mut event = sub_event(block("msg_3", ContentBlock::text("x"), 1));
        event.agent.subagent = None;
        let lines = print_stream(&[event], &PrintOptions::default());
        assert_eq!(lines[0]["agent_id"], CHILD);
        assert!(lines[0].get("subagent_type").is_none());
        assert!(lines[0].get("task_description").is_none());
    }

    #[test]
    fn retry_is_an_api_retry_system_line_counting_retries() {
        let retry = EventKind::Retry {
            attempt: 2,
            max_attempts: 9,
            delay_ms: 1500,
            reason: "529 Overloaded".into(),
            scope: fleet_protocol::RetryScope::Request,
            error_status: Some(529),
        };
        let lines = print_stream(
            &[main_event(started()), main_event(retry)],
            &PrintOptions::default(),
        );
        assert_eq!(
            keys(&lines[1]),
            [
                "type",
                "subtype",
                "attempt",
                "max_retries",
                "retry_delay_ms",
                "error_status",
                "error",
                "error_message",
                "retry_scope",
                "session_id",
                "uuid"
            ]
        );
        assert_eq!(lines[1]["retry_scope"], "request");
        assert_eq!(lines[1]["subtype"], "api_retry");
        assert_eq!(lines[1]["attempt"], 1);
        assert_eq!(lines[1]["max_retries"], 8);
        assert_eq!(lines[1]["retry_delay_ms"], 1500);
        assert_eq!(lines[1]["error"], "overloaded");
        assert_eq!(lines[1]["error_message"], "529 Overloaded");
        assert_eq!(lines[1]["error_status"], 529);
    }

    #[test]
    fn deltas_print_only_with_partial_messages_and_count_block_indexes() {
        let plain = print_stream(&basic_session(), &PrintOptions::default());
        assert!(plain.iter().all(|l| l["type"] != "stream_event"));

        let options = PrintOptions {
            include_partial_messages: true,
            ..PrintOptions::default()
        };
        let mut events = basic_session();
        // A thinking delta for the second block of msg_1, between its two blocks.
        events.insert(5, main_event(EventKind::ThinkingDelta("hmm".into())));
        let lines = print_stream(&events, &options);
        let deltas: Vec<&Value> = lines
            .iter()
            .filter(|l| l["type"] == "stream_event")
            .collect();
        assert_eq!(deltas.len(), 4);
        assert_eq!(
            deltas[0]["event"],
            json!({ "type": "content_block_delta", "index": 0,
                    "delta": { "type": "text_delta", "text": "Reading " } })
        );
        assert_eq!(deltas[2]["event"]["index"], 1);
        assert_eq!(deltas[2]["event"]["delta"]["thinking"], "hmm");
        assert_eq!(
            deltas[3]["event"]["index"], 0,
            "a new message counts from 0"
        );
        assert_eq!(deltas[3]["parent_tool_use_id"], Value::Null);
        assert_eq!(deltas[3]["session_id"], SESSION);
    }

    #[test]
    fn session_id_from_options_is_used_before_started() {
        let options = PrintOptions {
            session_id: Some("s-1".into()),
            ..PrintOptions::default()
        };
        let retry = EventKind::Retry {
            attempt: 2,
            max_attempts: 3,
            delay_ms: 10,
            reason: "timeout".into(),
            scope: fleet_protocol::RetryScope::Request,
            error_status: None,
        };
        let lines = print_stream(&[main_event(retry)], &options);
        assert_eq!(lines[0]["session_id"], "s-1");
    }

    #[test]
    fn a_closed_pipe_is_an_io_error_not_a_panic() {
        let mut printer = StreamJsonPrinter::new(Box::new(ClosedPipe), &PrintOptions::default());
        let err = printer.event(&main_event(started())).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe);
        // Events with no line write nothing, so they cannot fail.
        printer
            .event(&main_event(EventKind::TextDelta("x".into())))
            .unwrap();
        assert!(printer.finish().is_err());
    }
}
