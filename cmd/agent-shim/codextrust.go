package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Codex runs a hook from a user's hooks.json only once a person trusted
// it (the TUI's /hooks); until then `codex exec` skips it without a word.
// The trust is stored in config.toml:
//
//	[hooks.state."<hooks.json path>:pre_tool_use:<group>:<handler>"]
//	trusted_hash = "sha256:<hex>"
//
// and a hook whose current hash differs is "modified": skipped as well.
// Both are computed here as Codex computes them (codex-rs, hooks/src/
// engine/discovery.rs: hook_key, hook_hash and the handler normalization
// before it; config/src/fingerprint.rs: version_for_toml):
//
//   - the key is the hooks.json path as Codex names it (CODEX_HOME
//     canonicalized when set, else ~/.codex), the event's snake_case
//     label, the group's index in the event's array and the handler's
//     index in the group;
//   - the hash is sha256 over the compact JSON, keys sorted, of the
//     identity {"event_name": label, "matcher": m, "hooks": [handler]},
//     where the handler is {"type": "command", "command": c, "timeout":
//     t, "async": a} plus "statusMessage" when set, the timeout defaulted
//     to 600 and at least 1, and fields that are unset (matcher,
//     statusMessage) left out, as the TOML value Codex hashes leaves them.
//     Strings are escaped as serde_json escapes them: only '"', '\\' and
//     control characters, nothing above U+001F.
//
// TestCodexHookHash holds this to hashes Codex 0.169.0's app-server
// reported (hooks/list, currentHash) for the same hooks.json.

// codexHandler is one command handler of a hooks.json group, as Codex
// reads it.
type codexHandler struct {
	Command       string
	Timeout       *int64
	Async         bool
	StatusMessage *string
}

// codexHookKey is the config.toml hooks.state key of a handler.
func codexHookKey(hooksPath, event string, group, handler int) string {
	return fmt.Sprintf("%s:%s:%d:%d", hooksPath, codexEventLabel(event), group, handler)
}

// codexEventLabel is Codex's snake_case label of a hooks.json event name.
func codexEventLabel(event string) string {
	var b strings.Builder
	for i, r := range event {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// codexHookHash is the trusted_hash Codex wants for handler h of a group
// with matcher m (nil: none) under event.
func codexHookHash(event string, matcher *string, h codexHandler) string {
	timeout := int64(600)
	if h.Timeout != nil {
		timeout = max(*h.Timeout, 1)
	}
	handler := map[string]string{
		"type":    serdeString("command"),
		"command": serdeString(h.Command),
		"timeout": strconv.FormatInt(timeout, 10),
		"async":   strconv.FormatBool(h.Async),
	}
	if h.StatusMessage != nil {
		handler["statusMessage"] = serdeString(*h.StatusMessage)
	}
	identity := map[string]string{
		"event_name": serdeString(codexEventLabel(event)),
		"hooks":      "[" + serdeObject(handler) + "]",
	}
	// Codex drops the matcher of events that take none; PreToolUse and
	// PostToolUse keep it.
	if matcher != nil && event != "UserPromptSubmit" && event != "Stop" {
		identity["matcher"] = serdeString(*matcher)
	}
	sum := sha256.Sum256([]byte(serdeObject(identity)))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// serdeObject writes an object of already encoded values, keys sorted.
func serdeObject(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(serdeString(k))
		b.WriteByte(':')
		b.WriteString(m[k])
	}
	b.WriteByte('}')
	return b.String()
}

// serdeString encodes s as serde_json does: '"' and '\\' escaped, control
// characters as \b \t \n \f \r or \u00xx, everything else as it is.
// (encoding/json would escape <, >, & and U+2028/U+2029 too.)
func serdeString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else if r == utf8.RuneError {
				b.WriteRune(utf8.RuneError) // Rust strings hold no invalid UTF-8
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
