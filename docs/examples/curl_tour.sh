#!/usr/bin/env bash
# The HTTP tour of docs/api.md: every call runs as written against `make run`, on PostgreSQL or
# SQLite, with any shell that has bash and curl:
#
#   KEY=tlk_… bash docs/examples/curl_tour.sh          # KEY: the key make run printed
#   KEY=tlk_… PORT=8001 bash docs/examples/curl_tour.sh   # when make run serves another port
#
# Every write carries its id and the tour ends by erasing what it created, so it runs again with the
# same answers (only times and generated compaction ids differ). It writes trip.json in the current
# directory. Run twice by tests/e2e/test_curl_tour.py, which compares the two outputs.
set -eu
: "${KEY:?set KEY to the API key make run printed}"

API=http://127.0.0.1:${PORT:-8000}/api/v1
H="Authorization: Bearer $KEY"
J="Content-Type: application/json"

# conversations: create, list (paginated: {results, next}), detail
curl -s -H "$H" -H "$J" -X POST $API/conversations/ \
  -d '{"id": "trip", "title": "Trip planning", "settings": {"max_tokens": 50000}}'
curl -s -H "$H" "$API/conversations/?limit=10"
curl -s -H "$H" $API/conversations/trip/
# edit the title and settings (settings replace the overrides object; validated like creation)
curl -s -H "$H" -H "$J" -X PATCH $API/conversations/trip/ -d '{"title": "Trip to Porto", "settings": {"max_tokens": 60000}}'

# start a turn: header + user.prompt + attachments with their seed paths
curl -s -H "$H" -H "$J" -X POST $API/conversations/trip/turns/ \
  -d '{"turn_id": "turn_1", "prompt": "Find a hotel in Porto", "attachments": [{"name": "notes.txt", "mime": "text/plain", "text": "budget 120 EUR"}]}'

# contribute blocks (an "id" makes the call idempotent: the same id answers 200 with the stored block, 201 only when created)
curl -s -H "$H" -H "$J" -X POST $API/conversations/trip/blocks/ -d '{"blocks": [
  {"type": "react.tool.call", "author": "react", "mime": "application/json", "text": "{\"q\": \"hotels porto\"}", "meta": {"tool_call_id": "tc_1", "tool_id": "web_tools.web_search"}, "id": "tc_1.call"},
  {"type": "react.tool.result", "author": "tool", "mime": "application/json", "text": "{\"hits\": [\"Hotel Ribeira\"]}", "meta": {"tool_call_id": "tc_1", "tool_id": "web_tools.web_search"}, "id": "tc_1.result"}]}'

# the native loop: the model's reply as its API answered it (an Anthropic Message here; an OpenAI Response or
# ChatCompletion, a Gemini GenerateContentResponse alike) becomes blocks, answering the tool calls to run;
# their results go back by call id (add "render_id" to report the reply's usage on the render it answered)
curl -s -H "$H" -H "$J" -X POST $API/conversations/trip/replies/ -d '{"response": {"id": "msg_tour_1", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
  "content": [{"type": "text", "text": "Checking the room."}, {"type": "tool_use", "id": "toolu_1", "name": "hotels-2eavailability", "input": {"hotel": "Hotel Ribeira"}}],
  "stop_reason": "tool_use", "usage": {"input_tokens": 120, "output_tokens": 30}}}'
curl -s -H "$H" -H "$J" -X POST $API/conversations/trip/tool-results/ -d '{"results": [{"tool_call_id": "toolu_1", "output": {"free_rooms": 3}}]}'

# render for the next model call (format: anthropic | openai | text, or native: anthropic_messages | openai_responses | openai_chat | gemini_contents; "debug": true adds the text stream with =>[k] cache marks)
curl -s -H "$H" -H "$J" -X POST $API/conversations/trip/render/ \
  -d '{"format": "text", "debug": true, "include_sources": true, "include_announce": true, "announce": ["2 tool calls left"], "system": "You are a travel agent."}'

# compact now (wait) or in the background (202 + the compaction's id and url); list the compactions
curl -s -H "$H" -H "$J" -X POST $API/conversations/trip/compact/ -d '{"force": true, "wait": true}'
# → {"id":"cmp_…","status":"rejected","before_tokens":226,"after_tokens":282,…,"error":"rejected: the context would not shrink …"}
curl -s -H "$H" -H "$J" -X POST $API/conversations/trip/compact/ -d '{"force": true}'
# → 202 {"id":"cmp_…","url":"…/conversations/trip/compactions/cmp_…/","status":"queued",…}: GET the url to follow it
#   (under make run, tasks run in the request: the 202 already carries the final status)
curl -s -H "$H" "$API/conversations/trip/compactions/?limit=5"

# read a block back by path (hidden and compacted ones too), hide one, unhide it, search
curl -s -H "$H" "$API/conversations/trip/blocks/?path=tc:turn_1.tc_1.result&include_hidden=1"
curl -s -H "$H" -H "$J" -X POST $API/conversations/trip/hide/ \
  -d '{"path": "tc:turn_1.tc_1.result", "replacement_text": "[search results hidden: read tc:turn_1.tc_1.result]"}'
curl -s -H "$H" -H "$J" -X POST $API/conversations/trip/unhide/ -d '{"path": "tc:turn_1.tc_1.result"}'
curl -s -H "$H" "$API/conversations/trip/search/?q=Ribeira"

# list the context's blocks ({blocks, next}; filters type, turn_id, hidden=0|1, since_seq; limit ≤ 200)
curl -s -H "$H" "$API/conversations/trip/blocks/?type=react.tool.result&limit=20"

# sources pool: merge by URL (sids stay stable), read a range path
curl -s -H "$H" -H "$J" -X POST $API/conversations/trip/sources/ \
  -d '{"sources": [{"url": "https://example.org/ribeira", "title": "Hotel Ribeira"}]}'
curl -s -H "$H" $API/conversations/trip/sources/
curl -s -g -H "$H" "$API/conversations/trip/blocks/?path=so:sources_pool[1-1]"   # -g: brackets are no curl glob

# export conv.timeline.v1 (add ?window=visible for the post-summary window; streamed, one consistent
# snapshot) and import it
curl -s -H "$H" $API/conversations/trip/timeline/ > trip.json
python3 -c 'import json; d = json.load(open("trip.json")); d["id"] = "trip-copy"; json.dump(d, open("trip.json", "w"))'
curl -s -H "$H" -H "$J" -X POST $API/conversations/import/ --data-binary @trip.json

# any named context takes the same routes
curl -s -H "$H" -H "$J" -X POST $API/conversations/trip/contexts/attempt_a/blocks/ -d '{"blocks": [{"type": "react.notes", "author": "react", "text": "trying", "id": "a.note.1"}]}'
curl -s -H "$H" -H "$J" -X POST $API/conversations/trip/contexts/attempt_a/render/ -d '{"format": "openai"}'

# erase a conversation with everything it owns (204 each: the copy imported above, then the tour's own)
curl -s -o /dev/null -w '%{http_code}\n' -H "$H" -X DELETE $API/conversations/trip-copy/
curl -s -o /dev/null -w '%{http_code}\n' -H "$H" -X DELETE $API/conversations/trip/
