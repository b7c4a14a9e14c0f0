package shellparse

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// interpTests: shell commands inside interpreter code, with the spellings
// that hide them.
var interpTests = []struct {
	in   string
	want []string
}{
	{`python -c "import os; os.system('rm -rf /')"`, []string{`python -c import os; os.system('rm -rf /')`, "python code › rm -rf /"}},
	{`python3 -c 'import subprocess; subprocess.run("git push -f", shell=True)'`, []string{`python3 -c import subprocess; subprocess.run("git push -f", shell=True)`, "python3 code › git push -f"}},
	{`python3 -c 'import subprocess as s; s.run(["git", "reset", "--hard"])'`, []string{`python3 -c import subprocess as s; s.run(["git", "reset", "--hard"])`, "python3 code › git reset --hard"}},
	{`python3 -Ic "__import__('os').popen('rm -rf /')"`, []string{`python3 -Ic __import__('os').popen('rm -rf /')`, "python3 code › rm -rf /"}},
	{`python3 -c "import os; os.system('rm -rf ' + d)"`, []string{`python3 -c import os; os.system('rm -rf ' + d)`, "python3 code ›  !python3 code runs a command that is not a literal: system('rm -rf ' + d)"}},
	{`python3 -c "import os; os.system(f'rm -rf {d}')"`, []string{`python3 -c import os; os.system(f'rm -rf {d}')`, "python3 code ›  !python3 code runs a command that is not a literal: system(f'rm -rf {d}')"}},
	{`python3 -c "import os; c='rm -rf /'; os.system(c)"`, []string{`python3 -c import os; c='rm -rf /'; os.system(c)`, "python3 code ›  !python3 code runs a command that is not a literal: system(c)"}},
	{"python3 -c 'print(1)'", []string{"python3 -c print(1)"}},
	{"python3 script.py -c 'os.system(\"rm\")'", []string{`python3 script.py -c os.system("rm")`}},
	{"python3 - <<'EOF'\nimport os\nos.system('git push --force')\nEOF", []string{"python3 - <<import os\nos.system('git push --force')\n:read", "python3 code › git push --force <<import os\nos.system('git push --force')\n:read"}},
	{"python3 <<< 'import os; os.system(\"rm -rf /\")'", []string{`python3 <<<import os; os.system("rm -rf /"):read`, `python3 code › rm -rf / <<<import os; os.system("rm -rf /"):read`}},
	{`echo "import os; os.system('rm -rf /')" | python3`, []string{`echo import os; os.system('rm -rf /')`, "python3", "python3 code › rm -rf /"}},
	{`node -e "require('child_process').execSync('rm -rf /')"`, []string{`node -e require('child_process').execSync('rm -rf /')`, "node code › rm -rf /"}},
	{"node --eval \"const cp = require('child_process'); cp.spawnSync('git', ['push', '-f'])\"", []string{"node --eval const cp = require('child_process'); cp.spawnSync('git', ['push', '-f'])", "node code › git push -f"}},
	{"node -p 'require(\"child_process\").execSync(`rm -rf ${d}`)'", []string{"node -p require(\"child_process\").execSync(`rm -rf ${d}`)", "node code ›  !node code runs a command that is not a literal: execSync(`rm -rf ${d}`)"}},
	{`node -e "/x/.exec('y')"`, []string{`node -e /x/.exec('y')`}},
	{`perl -e 'system("rm -rf /")'`, []string{`perl -e system("rm -rf /")`, "perl code › rm -rf /"}},
	{`perl -le 'print qx{git push -f}'`, []string{`perl -le print qx{git push -f}`, "perl code › git push -f"}},
	{"perl -E '`rm -rf /`'", []string{"perl -E `rm -rf /`", "perl code › rm -rf /"}},
	{`perl -e 'system "rm", "-rf", "/"'`, []string{`perl -e system "rm", "-rf", "/"`, "perl code › rm -rf /"}},
	{`python3 -c 'import shutil; shutil.rmtree("/")'`, []string{`python3 -c import shutil; shutil.rmtree("/")`, "python3 code › rm -rf /"}},
	{`node -e "require('fs').rmSync('/', {recursive: true})"`, []string{`node -e require('fs').rmSync('/', {recursive: true})`, "node code › rm -rf /"}},
	{`ruby -e 'FileUtils.rm_rf "/"'`, []string{`ruby -e FileUtils.rm_rf "/"`, "ruby code › rm -rf /"}},
	{`Rscript -e 'unlink("/", recursive = TRUE)'`, []string{`Rscript -e unlink("/", recursive = TRUE)`, "Rscript code › rm -rf /"}},
	{`python3 -c 'import os; os.remove(p)'`, []string{`python3 -c import os; os.remove(p)`}},
	{`perl -e 'system qw(rm -rf /)'`, []string{`perl -e system qw(rm -rf /)`, "perl code › rm -rf /"}},
	{`perl -e 'exec(qw{git push -f})'`, []string{`perl -e exec(qw{git push -f})`, "perl code › git push -f"}},
	{`perl -e 'system("rm -rf $d")'`, []string{`perl -e system("rm -rf $d")`, `perl code ›  !perl code runs a command that is not a literal: system("rm -rf $d")`}},
	{`ruby -e 'system("git reset --hard")'`, []string{`ruby -e system("git reset --hard")`, "ruby code › git reset --hard"}},
	{"ruby -e '%x(rm -rf /)'", []string{"ruby -e %x(rm -rf /)", "ruby code › rm -rf /"}},
	{`ruby -e 'exec "rm -rf #{d}"'`, []string{`ruby -e exec "rm -rf #{d}"`, `ruby code ›  !ruby code runs a command that is not a literal: exec "rm -rf #{d}"`}},
	{`php -r 'shell_exec("rm -rf /");'`, []string{`php -r shell_exec("rm -rf /");`, "php code › rm -rf /"}},
	{`php -r 'echo ` + "`git push -f`" + `;'`, []string{"php -r echo `git push -f`;", "php code › git push -f"}},
	{`lua -e 'os.execute("rm -rf /")'`, []string{`lua -e os.execute("rm -rf /")`, "lua code › rm -rf /"}},
	{`Rscript -e 'system("rm -rf /")'`, []string{`Rscript -e system("rm -rf /")`, "Rscript code › rm -rf /"}},
	{`Rscript -e 'system2("git", c("push", "-f"))'`, []string{`Rscript -e system2("git", c("push", "-f"))`, "Rscript code › git push -f"}},
	{`Rscript -e 'summary(x)'`, []string{`Rscript -e summary(x)`}},
	{`python3 $OPTS -c 'x'`, []string{`python3 ?$OPTS -c x`, "python3 code ›  !python3's option $OPTS is not static"}},
}

func TestInterpreters(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range interpTests {
		if seen[tc.in] {
			t.Fatalf("duplicate test input %q", tc.in)
		}
		seen[tc.in] = true
		t.Logf("input: %q", tc.in)
		s, err := Parse(tc.in)
		if err != nil {
			t.Errorf("unexpected error: %v", err)
			continue
		}
		if diff := cmp.Diff(tc.want, summary(s.Commands)); diff != "" {
			t.Errorf("%q: commands mismatch (-want +got):\n%s", tc.in, diff)
		}
	}
}
