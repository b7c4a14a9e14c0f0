package shellparse

import (
	"strings"

	"github.com/agent-shim/agent-shim/internal/programs"
)

// What interpreter code shows of reaching other machines (Command.Network):
// a URL whose host is another machine, in any language; in Python, a call
// that downloads a dataset, a model or a package by name (load_dataset,
// from_pretrained, hf_hub_download, nltk.download, pip.main, …), and a
// module that is only a client of other machines (boto3, openai,
// paramiko, smtplib, …). What the code does not show (a URL it reads from
// a file or builds from variables) is as opaque as a script file.
//
// The run-time layer does not confine the network, so this is decided
// from the text wherever the line runs. A URL naming this machine
// (http://localhost:8000/, f"http://127.0.0.1:{port}") reaches none.

// urlSchemes are the schemes of URLs that reach another machine.
var urlSchemes = map[string]bool{
	"http": true, "https": true, "ftp": true, "ftps": true, "ws": true, "wss": true, "sftp": true,
	"ssh": true, "git": true, "s3": true, "gs": true, "hf": true,
}

// downloadCalls are Python calls that fetch what their first argument
// names from another machine, unless it is a local path (or, for
// load_dataset, one of the builders that read local files).
var downloadCalls = []string{
	"load_dataset", "from_pretrained", "hf_hub_download", "snapshot_download", "nltk.download",
	"spacy.cli.download", "torch.hub.load", "tfds.load", "get_file", "urlretrieve", "pip.main",
	"gdown.download", "fetch_openml", "fetch_20newsgroups", "fetch_california_housing", "fetch_lfw_people",
	"fetch_covtype", "fetch_kddcup99", "fetch_olivetti_faces", "fetch_rcv1", "load_dataset_builder",
}

// localBuilders are load_dataset's builders for files of this machine.
var localBuilders = map[string]bool{
	"json": true, "csv": true, "parquet": true, "text": true, "arrow": true, "pandas": true,
	"imagefolder": true, "audiofolder": true, "webdataset": true, "sql": true,
}

// remoteModules are Python modules that are only clients of other
// machines.
var remoteModules = []string{
	"boto3", "botocore", "openai", "anthropic", "paramiko", "smtplib", "ftplib", "poplib", "imaplib",
	"telnetlib", "kaggle", "kagglehub", "gdown", "yt_dlp", "pytube", "google.cloud", "huggingface_hub",
}

// codeNetwork returns how code visibly reaches other machines, "" when it
// shows no such thing.
func codeNetwork(l lang, code string) string {
	if u := remoteURL(l, code); u != "" {
		return "names " + u
	}
	if l != langPython {
		return ""
	}
	for _, name := range downloadCalls {
		if call := downloadCall(code, name); call != "" {
			return "fetches " + call
		}
	}
	if strings.Contains(code, "download=True") {
		return "downloads a dataset (download=True)"
	}
	for _, m := range remoteModules {
		if importsModule(code, m) {
			return "imports " + m + ", a client of other machines"
		}
	}
	return ""
}

// remoteURL returns the first URL in code whose host is not this machine,
// or whose host it cannot read (f"http://{host}/"). URLs after a comment
// sign on their line are skipped.
func remoteURL(l lang, code string) string {
	for off := 0; ; {
		i := strings.Index(code[off:], "://")
		if i < 0 {
			return ""
		}
		i += off
		off = i + 3
		s := i
		for s > 0 && isSchemeByte(code[s-1]) {
			s--
		}
		scheme := strings.ToLower(code[s:i])
		if !urlSchemes[scheme] || commented(l, code, s) {
			continue
		}
		e := off
		for e < len(code) && !strings.ContainsRune(" \t\n\"'`)(,;<>\\", rune(code[e])) {
			e++
		}
		u := code[s:e]
		if host := urlHost(code[off:e]); host == "" || !programs.Loopback(host) {
			return u
		}
	}
}

// urlHost returns the host of what follows a URL's scheme: "" when it is
// not a plain one (a template, a variable).
func urlHost(rest string) string {
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		rest = rest[at+1:]
	}
	host := rest
	if strings.HasPrefix(host, "[") {
		end := strings.IndexByte(host, ']')
		if end < 0 {
			return ""
		}
		host = host[1:end]
	} else if c := strings.IndexByte(host, ':'); c >= 0 {
		host = host[:c] // the port may be a template: {port}
	}
	if strings.ContainsAny(host, "{}$%+") {
		return ""
	}
	return host
}

func isSchemeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '.' || c == '-'
}

// commented reports whether position i of code follows a comment sign on
// its line outside quotes: # (python, ruby, perl, R) or // (node, php).
func commented(l lang, code string, i int) bool {
	start := strings.LastIndexByte(code[:i], '\n') + 1
	line := code[start:i]
	var quote byte
	for j := 0; j < len(line); j++ {
		c := line[j]
		switch {
		case quote != 0:
			if c == '\\' {
				j++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case c == '#' && l != langNode && l != langPHP:
			return true
		case c == '/' && j+1 < len(line) && line[j+1] == '/' && (l == langNode || l == langPHP):
			return true
		}
	}
	return false
}

// downloadCall returns the first call of name in code whose first
// argument is not a local path ("" when there is none): its text up to
// the argument's end. A first argument that is not a string literal is
// not read as a download.
func downloadCall(code, name string) string {
	for off := 0; ; {
		i := strings.Index(code[off:], name+"(")
		if i < 0 {
			return ""
		}
		i += off
		off = i + len(name) + 1
		if i > 0 && identByte(code[i-1]) {
			continue // load_dataset_x(, my_get_file(
		}
		arg := strings.TrimLeft(code[off:], " \t\n")
		if arg == "" || (arg[0] != '\'' && arg[0] != '"') {
			if name == "nltk.download" || name == "hf_hub_download" || name == "snapshot_download" || name == "pip.main" {
				return name + "(…)" // fetches whatever it is given
			}
			continue
		}
		end := strings.IndexByte(arg[1:], arg[0])
		if end < 0 {
			return name + "(…)"
		}
		lit := arg[1 : 1+end]
		if localTarget(name, lit) {
			continue
		}
		return name + "(" + arg[:2+end] + ")"
	}
}

// localTarget reports whether a download call's first argument names a
// file of this machine.
func localTarget(name, lit string) bool {
	switch {
	case strings.HasPrefix(lit, "/"), strings.HasPrefix(lit, "./"), strings.HasPrefix(lit, "../"),
		strings.HasPrefix(lit, "~"), lit == ".":
		return true
	case name == "load_dataset" || name == "load_dataset_builder":
		return localBuilders[lit]
	}
	return false
}

// importsModule reports whether Python code imports module m (import m,
// import m.x, from m import …, from m.x import …).
func importsModule(code, m string) bool {
	for _, prefix := range []string{"import ", "from "} {
		for off := 0; ; {
			i := strings.Index(code[off:], prefix+m)
			if i < 0 {
				break
			}
			i += off
			off = i + len(prefix) + len(m)
			if i > 0 && identByte(code[i-1]) {
				continue
			}
			if off == len(code) || !identByte(code[off]) {
				return true
			}
		}
	}
	return false
}
