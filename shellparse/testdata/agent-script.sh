cd /work/repo && git status --short && git diff --stat HEAD~1
for f in $(git ls-files '*.go'); do gofmt -l "$f"; done | sort | uniq -c
go test -run 'TestDecide|TestParse' ./... 2>&1 | tail -n 20
if [ -f go.mod ]; then go vet ./... || echo "vet failed" >&2; fi
git log --oneline -20 | grep -v Merge | head -5
cat <<'END' | wc -l
line one $(not run)
line two
END
bash -c 'npm ci && npm run build' && ls -la dist/
find . -name '*.tmp' -exec rm {} \;
x=$(git rev-parse HEAD); echo "at ${x:0:7}"
