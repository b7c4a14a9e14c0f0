package shellparse

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// classTests cover issue 15's classes, each with its bypass spellings.
// Every input is also checked with bash -n (TestBashAgreesClasses).
var classTests = []struct {
	in   string
	want []string
}{
	// Runners kept as data.
	{"jiri runp rm -rf /", []string{"jiri runp rm -rf /", "jiri runp › rm -rf /"}},
	{"jiri runp -exit-on-error -projects=fuchsia git reset --hard", []string{"jiri runp -exit-on-error -projects=fuchsia git reset --hard", "jiri runp › git reset --hard"}},
	{"jiri -j 4 runp --collate-stdout git push -f", []string{"jiri -j 4 runp --collate-stdout git push -f", "jiri runp › git push -f"}},
	{"jiri runp -frob rm -rf /", []string{"jiri runp -frob rm -rf / !cannot tell what jiri runp runs: unknown option -frob"}},
	{"jiri -frob runp rm", []string{"jiri -frob runp rm !cannot tell what jiri runs: unknown option -frob"}},
	{"jiri update", []string{"jiri update"}},
	{"flock /tmp/l rm -rf /", []string{"flock /tmp/l rm -rf /", "flock › rm -rf /"}},
	{"flock -n -w 5 /tmp/l git push -f", []string{"flock -n -w 5 /tmp/l git push -f", "flock › git push -f"}},
	{"flock /tmp/l -c 'rm -rf /'", []string{"flock /tmp/l -c rm -rf /", "flock -c › rm -rf /"}},
	{"flock --command='git reset --hard' /tmp/l", []string{"flock --command=git reset --hard /tmp/l", "flock -c › git reset --hard"}},
	{"flock 9", []string{"flock 9"}},
	{"script -qc 'rm -rf /' /dev/null", []string{"script -qc rm -rf / /dev/null script/dev/null:/dev/null", "script -c › rm -rf / script/dev/null:/dev/null"}},
	{"script -q -c 'rm -rf /' log.txt", []string{"script -q -c rm -rf / log.txt scriptlog.txt:write", "script -c › rm -rf / scriptlog.txt:write"}},
	{"script", []string{"script !script runs an interactive shell"}},
	{"watch -n1 'rm -rf /'", []string{"watch -n1 rm -rf /", "watch › rm -rf /"}},
	{"watch -n 1 git reset --hard", []string{"watch -n 1 git reset --hard", "watch › git reset --hard"}},
	{"watch -d=permanent -x rm -rf /", []string{"watch -d=permanent -x rm -rf /", "watch › rm -rf /"}},
	{"watch 'ls; rm -rf /'", []string{"watch ls; rm -rf /", "watch › ls", "watch › rm -rf /"}},
	{"chroot / rm -rf /", []string{"chroot / rm -rf /", "chroot › rm -rf /"}},
	{"chroot --userspec=a:b /srv", []string{"chroot --userspec=a:b /srv !chroot runs an interactive shell"}},
	{"strace -f -o trace.txt rm -rf /", []string{"strace -f -o trace.txt rm -rf / -otrace.txt:write", "strace › rm -rf / -otrace.txt:write"}},
	{"strace -p 42", []string{"strace -p 42"}},
	{"ltrace -c git push -f", []string{"ltrace -c git push -f", "ltrace › git push -f"}},
	{"taskset -c 0 rm -rf /", []string{"taskset -c 0 rm -rf /", "taskset › rm -rf /"}},
	{"taskset 0x3 git reset --hard", []string{"taskset 0x3 git reset --hard", "taskset › git reset --hard"}},
	{"taskset -p 0x3 42", []string{"taskset -p 0x3 42"}},
	{"systemd-run --user --scope rm -rf /", []string{"systemd-run --user --scope rm -rf /", "systemd-run › rm -rf /"}},
	{"systemd-run -p MemoryMax=1G --working-directory=/ rm -rf *", []string{"systemd-run -p MemoryMax=1G --working-directory=/ rm -rf *", "systemd-run › rm -rf * @/"}},
	{"ssh host rm -rf /", []string{"ssh host rm -rf /", "ssh › rm -rf /"}},
	{"ssh -p 22 -i key user@host 'git reset --hard; ls'", []string{"ssh -p 22 -i key user@host git reset --hard; ls", "ssh › git reset --hard", "ssh › ls"}},
	{"ssh -o ProxyCommand='rm -rf /' host", []string{"ssh -o ProxyCommand=rm -rf / host", "ssh -c › rm -rf /"}},
	{"ssh -F /tmp/cfg host ls", []string{"ssh -F /tmp/cfg host ls", "ssh › ls"}}, // -F is the program table's (matcher)
	{"ssh -oInclude=/tmp/cfg host ls", []string{"ssh -oInclude=/tmp/cfg host ls !ssh -o Include=/tmp/cfg: options that cannot be read may run commands"}},
	{"ssh host", []string{"ssh host !ssh runs a remote shell reading standard input"}},
	{"ssh -N -L 8080:localhost:80 host", []string{"ssh -N -L 8080:localhost:80 host"}},
	{`ssh host "$CMD"`, []string{`ssh host ?"$CMD"`, `ssh host ?"$CMD" !ssh script is not static: "$CMD"`}},
	{"env -C / rm -rf *", []string{"env › rm -rf * @/"}},
	{"env --chdir=/etc rm -rf ../*", []string{"env › rm -rf ../* @/etc"}},
	{"env - rm -rf /", []string{"env › rm -rf /"}},
	{"env -i - PATH=/x git push -f", []string{"env › PATH=/x git push -f"}},
	{"env -S '-C / rm -rf *'", []string{"env › rm -rf * @/"}},
	{"env -S'-i FOO=1 git reset --hard'", []string{"env › FOO=1 git reset --hard"}},
	{"env -P /tmp/evil rm", []string{"env › PATH=/tmp/evil rm"}},
	{"env 'BASH_FUNC_ls%%=() { rm -rf /; }' bash -c ls", []string{"env BASH_FUNC_ls%%=() { rm -rf /; } bash -c ls !env sets BASH_FUNC_ls%%: a shell imports it as a function",
		"BASH_FUNC_ls%%= › function ls › rm -rf /", "env › bash -c › ls"}},
	{"parallel git reset --hard ::: x", []string{"parallel git reset --hard ::: x", "parallel › git reset --hard x"}},
	{"parallel ::: 'rm -rf /' ls", []string{"parallel ::: rm -rf / ls", "parallel › rm -rf /", "parallel › ls"}},
	{"parallel -j4 'rm -rf {}' ::: / /tmp", []string{"parallel -j4 rm -rf {} ::: / /tmp", "parallel › rm -rf /", "parallel › rm -rf /tmp"}},
	{"parallel --jobs 2 echo", []string{"parallel --jobs 2 echo", `parallel › echo ?"${PARALLEL_ARG}"`}},
	{"parallel -I@ 'rm -rf @' < hosts", []string{"parallel -I@ rm -rf @ <hosts:read", `parallel › rm -rf ?"${PARALLEL_ARG}" <hosts:read`}},
	{"parallel", []string{"parallel !parallel runs command lines from standard input"}},
	{"parallel :::: cmds.txt", []string{"parallel :::: cmds.txt !parallel runs command lines from a file"}},
	{"parallel --frob rm ::: x", []string{"parallel --frob rm ::: x !cannot tell what parallel runs: unknown option --frob"}},
	{"sem -j+0 'rm -rf /'", []string{"sem -j+0 rm -rf /", "sem › rm -rf /"}},
	{"unbuffer -p rm -rf /", []string{"unbuffer -p rm -rf /", "unbuffer › rm -rf /"}},
	{"catchsegv rm -rf /", []string{"catchsegv rm -rf /", "catchsegv › rm -rf /"}},
	{"firejail --noprofile --private rm -rf /", []string{"firejail --noprofile --private rm -rf /", "firejail › rm -rf /"}},
	{"proot -r /srv -w / rm -rf *", []string{"proot -r /srv -w / rm -rf *", "proot › rm -rf * @/"}},
	{"proot -q qemu-arm ls", []string{"proot -q qemu-arm ls !proot -q runs a program"}},
	{"nsenter -t 1 -m -u rm -rf /", []string{"nsenter -t 1 -m -u rm -rf /", "nsenter › rm -rf /"}},
	{"unshare -r --mount rm -rf /", []string{"unshare -r --mount rm -rf /", "unshare › rm -rf /"}},
	{"setpriv --reuid=1000 --init-groups rm -rf /", []string{"setpriv --reuid=1000 --init-groups rm -rf /", "setpriv › rm -rf /"}},
	{"sg wheel -c 'rm -rf /'", []string{"sg wheel -c rm -rf /", "sg › rm -rf /"}},
	{"sg - wheel git push -f", []string{"sg - wheel git push -f", "sg › git push -f"}},
	{"runcon -t unconfined_t rm -rf /", []string{"runcon -t unconfined_t rm -rf /", "runcon › rm -rf /"}},
	{"runcon system_u:system_r:t:s0 rm -rf /", []string{"runcon system_u:system_r:t:s0 rm -rf /", "runcon › rm -rf /"}},
	{"chrt -f 10 rm -rf /", []string{"chrt -f 10 rm -rf /", "chrt › rm -rf /"}},
	{"prlimit --nofile=1024 rm -rf /", []string{"prlimit --nofile=1024 rm -rf /", "prlimit › rm -rf /"}},
	{"cgexec -g cpu:grp rm -rf /", []string{"cgexec -g cpu:grp rm -rf /", "cgexec › rm -rf /"}},
	{"torsocks curl x", []string{"torsocks curl x", "torsocks › curl x"}},
	{"proxychains4 -q git push -f", []string{"proxychains4 -q git push -f", "proxychains4 › git push -f"}},
	{"xvfb-run -a rm -rf /", []string{"xvfb-run -a rm -rf /", "xvfb-run › rm -rf /"}},
	{"dbus-run-session -- rm -rf /", []string{"dbus-run-session -- rm -rf /", "dbus-run-session › rm -rf /"}},
	{"ccache gcc -c x.c", []string{"ccache gcc -c x.c", "ccache › gcc -c x.c"}},
	{"ccache -s", []string{"ccache -s"}},
	{"distcc rm -rf /", []string{"distcc rm -rf /", "distcc › rm -rf /"}},
	{"tmux new -d 'rm -rf /'", []string{"tmux new -d rm -rf / !tmux new runs a shell command", "tmux › rm -rf /"}},
	{"tmux send-keys -t x 'git push -f' Enter", []string{"tmux send-keys -t x git push -f Enter !tmux send-keys runs a shell command", "tmux › git push -f"}},
	{"tmux ls", []string{"tmux ls"}},
	{"screen -dmS x rm -rf /", []string{"screen -dmS x rm -rf /", "screen › rm -rf /"}},
	{"screen -r x", []string{"screen -r x !screen attaches to or drives a session whose commands cannot be seen"}},
	{"echo 'rm -rf /' | at now", []string{"echo rm -rf /", "at now", "at stdin › rm -rf /"}},
	{"at now + 1 minute <<< 'git push -f'", []string{"at now + 1 minute <<<git push -f:read", "at here-string › git push -f"}},
	{"at -f job.sh now", []string{"at -f job.sh now !at runs the commands in a file later"}},
	{"ls | entr -s 'rm -rf /'", []string{"ls", "entr -s rm -rf /", "entr › rm -rf /"}},
	{"chronic rm -rf /", []string{"chronic rm -rf /", "chronic › rm -rf /"}},
	{"gosu root git reset --hard", []string{"gosu root git reset --hard", "gosu › git reset --hard"}},
	{"envdir ./env git status", []string{"envdir ./env git status", "envdir › PATH=?(from envdir) git status"}},
	{"nice -- rm -rf /", []string{"nice › rm -rf /"}},
	{"command -- rm -rf /", []string{"command › rm -rf /"}},
	{"builtin -- eval -- 'rm -rf /'", []string{"builtin › eval › rm -rf /"}},
	{"exec -- rm -rf /", []string{"exec › rm -rf /"}},
	{"nohup -- rm -rf /", []string{"nohup › rm -rf /"}},
	{"time -- rm -rf /", []string{"rm -rf /"}},
	{"time -p -- git push -f", []string{"git push -f"}},
	{"eval -- 'rm -rf /'", []string{"eval › rm -rf /"}},
	{"source -- /dev/stdin <<< 'rm -rf /'", []string{"source here-string › rm -rf /"}},

	// Static scripts fed to a shell.
	{"echo 'rm -rf /' | bash", []string{"echo rm -rf /", "bash stdin › rm -rf /"}},
	{"echo rm -rf / | sh -s", []string{"echo rm -rf /", "sh stdin › rm -rf /"}},
	{`echo -e 'git push\x20-f' | bash`, []string{`echo -e git push\x20-f`, "bash stdin › git push -f"}},
	{`printf 'rm -rf /\n' | sh`, []string{`printf rm -rf /\n`, "sh stdin › rm -rf /"}},
	{`printf '%s\n' 'git reset --hard' | bash -`, []string{`printf %s\n git reset --hard`, "bash stdin › git reset --hard"}},
	{"cat <<EOF | bash\nrm -rf /\nEOF", []string{"cat <<rm -rf /\n:read", "bash stdin › rm -rf /"}},
	{"cat <<< 'git push -f' | sudo bash", []string{"cat <<<git push -f:read", "sudo › bash stdin › git push -f"}},
	{"echo $X | bash", []string{"echo ?$X", "bash !bash reads its script from standard input"}},
	{"printf %s $X | sh", []string{"printf %s ?$X", "sh !sh reads its script from standard input"}},
	{"echo ls | tee f | bash", []string{"echo ls", "tee f", "bash !bash reads its script from standard input"}},
	{"echo ls > f | bash", []string{"echo ls >f:write", "bash !bash reads its script from standard input"}},
	{"source /dev/stdin <<< 'rm -rf /'", []string{"source here-string › rm -rf /"}},
	{". /dev/stdin <<EOF\ngit push -f\nEOF", []string{". here-doc › git push -f"}},
	{"echo 'rm -rf /' | . /dev/stdin", []string{"echo rm -rf /", ". stdin › rm -rf /"}},
	{"bash /dev/stdin <<< 'rm -rf /'", []string{"bash here-string › rm -rf /"}},
	{"bash /dev/fd/3 3<<<'rm -rf /'", []string{"bash here-string › rm -rf /"}},
	{"bash /proc/self/fd/4 4<script", []string{"bash /proc/self/fd/4 4<script:read !bash reads its script from 4<script"}},
	{"bash /dev/fd/5", []string{"bash /dev/fd/5 !bash reads its script from descriptor 5"}},

	// sh -c with positional parameters.
	{`sh -c 'rm -rf "$1"' _ /`, []string{"sh -c › rm -rf /"}},
	{`bash -c '"$@"' _ git push -f`, []string{"bash -c › git push -f"}},
	{`sh -c '$0 -rf $1' rm /`, []string{"sh -c › rm -rf /"}},
	{`sh -c 'git $*' _ reset --hard`, []string{"sh -c › git reset --hard"}},
	{`sh -c 'rm -rf "$1"' _ "$X"`, []string{`sh -c › rm -rf ?"$1"`}},
	{`sh -c 'shift; rm -rf "$1"' _ a /`, []string{"sh -c › shift", `sh -c › rm -rf ?"$1"`}},
	{`sh -c 'f() { rm "$1"; }; f' _ /`, []string{`sh -c › function f › rm ?"$1"`, "sh -c › f"}},

	// Globs in program position.
	{"/usr/bin/r[m] -rf /", []string{"?/usr/bin/r[m] -rf /"}},
	{"/???/r? -rf /", []string{"?/???/r? -rf /"}},
	{"sudo /bin/r* -rf /", []string{"sudo › ?/bin/r* -rf /"}},
	{"[ -f x ]", []string{"[ -f x ]"}},
	{"[ -f go.mod ] && go build", []string{"[ -f go.mod ]", "go build"}},
	{"/usr/bin/[ -f x ]", []string{"/usr/bin/[ -f x ]"}},
	{`/bin/r\* x`, []string{"/bin/r* x"}},

	// Arithmetic and other re-evaluation.
	{"x='a[$(rm -rf /)]'; [[ $x -eq 1 ]]", []string{"x=a[$(rm -rf /)]", "!arithmetic evaluates the value of $x, which is not known to be a number"}},
	{"echo $((x))", []string{"echo ?$((x)) !arithmetic evaluates the value of x, which is not known to be a number"}},
	{"echo $(($x + 1))", []string{"echo ?$(($x + 1)) !arithmetic evaluates the value of $x, which is not known to be a number"}},
	{"x=5; echo $((x * 2)) $((x))", []string{"x=5", "echo ?$((x * 2)) ?$((x))"}},
	{"for ((i = 0; i < 3; i++)); do echo $i; done", []string{"echo ?$i"}},
	{"for i in 1 2 3; do echo $((i + 1)); done", []string{"echo ?$((i + 1))"}},
	{"for i in $(ls); do echo $((i + 1)); done", []string{"$( ) › ls", "echo ?$((i + 1)) !arithmetic evaluates the value of i, which is not known to be a number"}},
	// read assigns only the variables it names (REPLY without one).
	{"n=0\nwhile IFS= read -r line; do ((n++)); done < f", []string{"n=0", "IFS= read -r line <f:read"}},
	{"n=0; while read; do ((n++)); done", []string{"n=0", "read"}},
	{"n=0; while read -r l; do ((n++)); done < \"$F\"", []string{"n=0", "read -r l <?\"$F\":read"}},
	{"n=0; while read -r n; do ((n++)); done", []string{"n=0", "read -r n", "!arithmetic evaluates the value of n, which is not known to be a number"}},
	{"n=0; while read -a n x; do ((n++)); done", []string{"n=0", "read -a n x", "!arithmetic evaluates the value of n, which is not known to be a number"}},
	{"n=0; read -r x; echo $((n))", []string{"n=0", "read -r x", "echo ?$((n))"}},
	{"n=0; read -r -u 3 n; echo $((n))", []string{"n=0", "read -r -u 3 n", "echo ?$((n)) !arithmetic evaluates the value of n, which is not known to be a number"}},
	{"n=0; read -q n; echo $((n))", []string{"n=0", "read -q n", "echo ?$((n)) !arithmetic evaluates the value of n, which is not known to be a number"}},
	{"x=5; f() { x=$1; }; f 'a[$(rm -rf /)]'; echo $((x))", []string{"x=5", "function f › x=?$1", "f a[$(rm -rf /)]", "echo ?$((x)) !arithmetic evaluates the value of x, which is not known to be a number"}},
	{"x=5; read x; echo $((x))", []string{"x=5", "read x", "echo ?$((x)) !arithmetic evaluates the value of x, which is not known to be a number"}},
	{"x=5; f() { echo $((x)); }", []string{"x=5", "function f › echo ?$((x)) !arithmetic evaluates the value of x, which is not known to be a number"}},
	{"x=0; while ((x < 3)); do x='a[$(rm -rf /)]'; done", []string{"x=0", "!arithmetic evaluates the value of x, which is not known to be a number", "x=a[$(rm -rf /)]"}},
	{"for ((i = 0; i < 3; i++)); do i='a[$(rm -rf /)]'; done", []string{"!arithmetic evaluates the value of i, which is not known to be a number", "i=a[$(rm -rf /)]"}},
	{"n=0; for f in a b; do n=$((n + 1)); done; echo $n", []string{"n=0", "n=?$((n + 1))", "echo ?$n"}},
	{"declare -A m; m[$k]=1; echo ${m[$k]}", []string{"declare -A m", "m=?m[$k]=1", "echo ?${m[$k]}"}},
	{"command_not_found_handle() { rm -rf /; }; zzz", []string{"function command_not_found_handle › rm -rf /", "zzz"}},
	{"echo $((RANDOM % 6 + 1)) $(($RANDOM)) $((SECONDS))", []string{"echo ?$((RANDOM % 6 + 1)) ?$(($RANDOM)) ?$((SECONDS))"}},
	{"unset RANDOM; RANDOM='a[$(rm -rf /)]'; echo $((RANDOM))", []string{"unset RANDOM", "RANDOM=a[$(rm -rf /)]", "echo ?$((RANDOM)) !arithmetic evaluates the value of RANDOM, which is not known to be a number"}},
	{"while :; do echo $((RANDOM)); unset RANDOM; done", []string{":", "echo ?$((RANDOM)) !arithmetic evaluates the value of RANDOM, which is not known to be a number", "unset RANDOM"}},
	{"((n++))", []string{"!arithmetic evaluates the value of n, which is not known to be a number"}},
	{"let 'y = x'", []string{"!arithmetic evaluates a value that is not known to be a number"}},
	{"let y=x", []string{"!arithmetic evaluates the value of x, which is not known to be a number"}},
	{"echo ${a['$(rm -rf /)']}", []string{"echo ?${a['$(rm -rf /)']} !arithmetic evaluates a value that is not known to be a number"}},
	{`echo "${arr[@]}" ${#arr[*]} ${arr[*]}`, []string{`echo ?"${arr[@]}" ?${#arr[*]} ?${arr[*]}`}},
	{"echo ${a[$i]} ${a[2]} ${#a[@]}", []string{"echo ?${a[$i]} ?${a[2]} ?${#a[@]} !arithmetic evaluates the value of $i, which is not known to be a number"}},
	{"echo ${s:$n:2}", []string{"echo ?${s:$n:2} !arithmetic evaluates the value of $n, which is not known to be a number"}},
	{"echo $(($# + $? + ${#x}))", []string{"echo ?$(($# + $? + ${#x}))"}},
	{"a[$k]=1", []string{"a=?a[$k]=1  !arithmetic evaluates the value of $k, which is not known to be a number"}},
	{"declare -i n; n=$v", []string{"declare -i n", "n=?$v  !arithmetic evaluates the value of $v, which is not known to be a number"}},
	{"declare -i n=$v", []string{"n=?$v declare -i !arithmetic evaluates the value of $v, which is not known to be a number"}},
	{`x='$(rm -rf /)'; echo "${x@P}"`, []string{"x=$(rm -rf /)", `echo ?"${x@P}" !${x@P} expands the value as a prompt, running what it holds`}},
	{`echo "${!ref}"`, []string{`echo ?"${!ref}" !${!ref} expands the variable ref names, evaluating a subscript in it`}},
	{"declare -n r='a[$(rm -rf /)]'", []string{"r=a[$(rm -rf /)] declare -n !declare -n makes r a reference evaluated on use"}},
	{"local -n r=target", []string{"r=target local -n"}},
	{"typeset -n r", []string{"typeset -n r !typeset -n makes r a reference evaluated on use"}},
	{"printf -v 'a[$(rm -rf /)]' x", []string{"printf -v a[$(rm -rf /)] x !printf -v assigns to a[$(rm -rf /)], evaluating its subscript"}},
	{"printf -v out '%s' x", []string{"printf -v out %s x"}},
	{"read -r 'a[$(rm -rf /)]'", []string{"read -r a[$(rm -rf /)] !read assigns to a[$(rm -rf /)], evaluating its subscript"}},
	{"read -r -p 'name? ' name", []string{"read -r -p name?  name"}},
	{"unset 'a[$(rm -rf /)]'", []string{"unset a[$(rm -rf /)] !unset assigns to a[$(rm -rf /)], evaluating its subscript"}},
	{"[ -v 'a[$(rm -rf /)]' ]", []string{"[ -v a[$(rm -rf /)] ] !test -v a[$(rm -rf /)] evaluates its subscript"}},
	{"[[ -v $x ]]", []string{"![[ -v ]] evaluates the subscript of a name not known statically"}},
	{"mapfile -C 'rm -rf /' -c 1 a <<< x", []string{"mapfile -C rm -rf / -c 1 a <<<x:read !mapfile -C runs a callback with each line of input", "mapfile -C › rm -rf / <<<x:read"}},
	{"hash -p /bin/rm ls; ls -rf /", []string{"hash -p /bin/rm ls !hash -p maps a command name to another program", "ls -rf /"}},
	{"BASH_CMDS[ls]=/bin/rm; ls", []string{"BASH_CMDS=?BASH_CMDS[ls]=/bin/rm  !sets BASH_CMDS: it maps command names to programs", "ls"}},
	{"BASH_ALIASES[ls]='rm -rf /'", []string{"BASH_ALIASES=?BASH_ALIASES[ls]='rm -rf /'  !sets BASH_ALIASES: it defines aliases"}},
	{"BASH_ENV=/tmp/x.sh bash -c ls", []string{"BASH_ENV=/tmp/x.sh bash -c ls !sets BASH_ENV: a shell runs that file first", "bash -c › ls"}},
	{"export ENV=/tmp/x.sh", []string{"ENV=/tmp/x.sh export !sets ENV: a shell runs that file first"}},
	{"SHELLOPTS=xtrace PS4='$(rm -rf /)' bash -c ls", []string{"PS4= › $( ) › rm -rf /", "PS4= › ?$(rm -rf /)", "SHELLOPTS=xtrace PS4=$(rm -rf /) bash -c ls !sets SHELLOPTS: a shell takes its options from it", "bash -c › ls"}},
	{"bash --rcfile /tmp/evil.sh -i -c ls", []string{"bash --rcfile /tmp/evil.sh -i -c ls !bash runs the startup file /tmp/evil.sh"}},
	{"bash -i", []string{"bash -i !interactive bash runs its startup file"}},
	{"bash --norc -i -c ls", []string{"bash -c › ls"}},
	{"bash -lc 'git status'", []string{"bash -c › git status"}},
	{"exec 3<>/dev/tcp/example.com/80", []string{"exec 3<>/dev/tcp/example.com/80:write !3<>/dev/tcp/example.com/80 opens a network connection"}},
	{"cat < /dev/udp/1.2.3.4/53", []string{"cat </dev/udp/1.2.3.4/53:read !</dev/udp/1.2.3.4/53 opens a network connection"}},
	{"enable -f ./evil.so evil", []string{"enable -f ./evil.so evil !enable -f loads a builtin from a shared object"}},
	{"complete -C 'rm -rf /' ls", []string{"complete -C rm -rf / ls !complete -C runs a command to complete", "complete -C › rm -rf /"}},
	{"fc -s", []string{"fc -s !fc runs commands from the history"}},
	{"fc -l", []string{"fc -l"}},

	// find's primaries keep their values.
	{"find . -name -delete -print", []string{"find . -name -delete -print"}},
	{"find . -name -exec rm {} \\;", []string{"find . -name -exec rm {} ;"}},
	{"find . -path x -exec rm {} +", []string{"find . -path x", "find -exec › rm ?{}"}},
}

func TestClasses(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, tc := range parseTests {
		seen[tc.in] = true
	}
	for _, tc := range classTests {
		if seen[tc.in] {
			t.Fatalf("duplicate test input %q", tc.in)
		}
		seen[tc.in] = true
		t.Run("", func(t *testing.T) {
			t.Logf("input: %q", tc.in)
			s, err := Parse(tc.in)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if diff := cmp.Diff(tc.want, summaryDir(s.Commands)); diff != "" {
				t.Errorf("commands mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// summaryDir is summary with " @dir" when a runner set the directory.
func summaryDir(cmds []*Command) []string {
	out := summary(cmds)
	for i, c := range cmds {
		if c.Dir != "" {
			out[i] += " @" + c.Dir
		}
	}
	return out
}

// TestRedirGlob: a redirection target with a pattern is marked Glob, so
// that the gate can expand it against the protected paths; a lone [ is
// not a pattern.
func TestRedirGlob(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"echo x > .git/confi[g]", true},
		{`echo x > .git/confi["g"]`, true},
		{"echo x >> ~/.bash[r]c", true},
		{"echo x > .git/conf*", true},
		{"echo x > a[", false},
		{"echo x > .git/config", false},
		{`echo x > ".git/confi[g]"`, false},
	} {
		t.Logf("input: %q", tc.in)
		s, err := Parse(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Commands) != 1 || len(s.Commands[0].Redirs) != 1 {
			t.Fatalf("want one command with one redirection, got %+v", s.Commands)
		}
		tg := s.Commands[0].Redirs[0].Target
		if tg.Glob != tc.want || tg.Static == tc.want {
			t.Errorf("%q: Glob = %v, Static = %v, want a pattern: %v (not known statically)", tc.in, tg.Glob, tg.Static, tc.want)
		}
	}
}

// TestDir: the directory each command runs in, after the cds before it:
// relative to where the line starts when that is all that is known, and
// unknown after a cd nobody can follow (a variable, cd -, a relative cd
// once CDPATH or cdable_vars may redirect it).
func TestDir(t *testing.T) {
	for _, tc := range []struct {
		in      string
		dir     string
		unknown bool
	}{
		{"git status", "", false},
		{"cd cmd && git status", "cmd", false},
		{"cd cmd; cd ../x && git status", "x", false},
		{"cd .. && git status", "..", false},
		{"cd /tmp && git status", "/tmp", false},
		{"cd ~/src && git status", "~/src", false},
		{`cd "$D" && git status`, "", true},
		{`cd "$D"; cd /tmp && git status`, "/tmp", false},
		{"cd - && git status", "", true},
		{"CDPATH=.git cd hooks && git status", "", true},
		{"export CDPATH=/tmp; cd x && git status", "", true},
		{"shopt -s cdable_vars; cd h && git status", "", true},
		{"CDPATH=/tmp; cd ./x && git status", "x", false},
		{"env -C .git sh -c 'echo x > config'", ".git", false},
		{`cd "$(git rev-parse --show-toplevel)" && make`, "", false},
		{"cd `git rev-parse --show-toplevel` && make", "", false},
		{`cd "$(git rev-parse --show-toplevel)/.."  && make`, "", true},
		{"sudo -D /tmp sh -c 'rm -rf *'", "/tmp", false},
		{`env -C "$D" git status`, "", true},
		{`env -C "$D" sh -c 'git status'`, "", true},
		{"cd /tmp; env -C x git status", "/tmp/x", false},
	} {
		t.Logf("input: %q", tc.in)
		s, err := Parse(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		last := s.Commands[len(s.Commands)-1]
		if last.Dir != tc.dir || last.DirUnknown != tc.unknown {
			t.Errorf("%q: Dir %q, DirUnknown %v; want %q, %v", tc.in, last.Dir, last.DirUnknown, tc.dir, tc.unknown)
		}
	}
}
