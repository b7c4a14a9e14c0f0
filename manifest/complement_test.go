package manifest

import (
	"regexp"
	"testing"
)

func TestComplement(t *testing.T) {
	tests := []struct {
		extra         string
		letterFirst   bool
		words, prefix []string
		fold          bool
		yes, no       []string
	}{
		{
			"", true, []string{"PATH", "ENV"}, []string{"LD_", "GIT_"}, false,
			[]string{"P", "PA", "PAT", "PATHS", "XPATH", "ENVX", "EN", "LD", "LDX", "LD2", "GIT", "GITX", "path", "_A", "A1"},
			[]string{"PATH", "ENV", "LD_", "LD_PRELOAD", "GIT_DIR", "GIT_", "1A", "", "A-B", "A.B"},
		},
		{
			".-", false, []string{"exec", "ok"}, nil, false,
			[]string{"e", "ex", "exe", "execdir", "exec-x", "o", "okdir", "name", "1", "a.b"},
			[]string{"exec", "ok", "", "-exec", ".a"},
		},
		{
			".-", false, nil, []string{"core.pager", "alias."}, true,
			[]string{"core", "core.editor", "core.page", "aliasx", "alia"},
			[]string{"core.pager", "CORE.PAGER", "Core.Pager.x", "alias.st", "ALIAS.x"},
		},
	}
	for _, tc := range tests {
		re := regexp.MustCompile("^" + complement(tc.extra, tc.letterFirst, tc.words, tc.prefix, tc.fold) + "$")
		for _, s := range tc.yes {
			if !re.MatchString(s) {
				t.Errorf("complement(%v, %v) does not match %q", tc.words, tc.prefix, s)
			}
		}
		for _, s := range tc.no {
			if re.MatchString(s) {
				t.Errorf("complement(%v, %v) matches %q", tc.words, tc.prefix, s)
			}
		}
	}
}

func TestFactor(t *testing.T) {
	keys := []string{"color.*", "core.abbrev", "core.eol", "user.name", "tag.sort", "log.*", "a.b.*"}
	re := regexp.MustCompile("^(?:" + factor(keys) + ")$")
	for _, s := range []string{"color.ui", "core.abbrev", "core.eol", "user.name", "tag.sort", "log.x.y", "a.b.c"} {
		if !re.MatchString(s) {
			t.Errorf("factor(%q) does not match %q", keys, s)
		}
	}
	for _, s := range []string{"color.", "core.pager", "core.", "core.abbrevx", "user.email", "tag", "alias.x", "a.b", "a.bc", "colorx.ui"} {
		if re.MatchString(s) {
			t.Errorf("factor(%q) matches %q", keys, s)
		}
	}
}

func TestEnvStems(t *testing.T) {
	words, stems := envStems([]string{"PATH", "EDITOR"}, []string{"LD_", "LESSOPEN", "LESSCLOSE"})
	re := regexp.MustCompile("^" + complement("", true, words, stems, false) + "$")
	for _, s := range []string{"PATHX", "PAT", "EDX", "LD", "LEX", "FOO"} {
		if !re.MatchString(s) {
			t.Errorf("does not match %q", s)
		}
	}
	// Stricter than the list: LESSKEY and EDITORS go with LESSOPEN and EDITOR.
	for _, s := range []string{"PATH", "EDITOR", "EDITORS", "EDI", "LD_PRELOAD", "LESSOPEN", "LESSKEY", "LES"} {
		if re.MatchString(s) {
			t.Errorf("matches %q", s)
		}
	}
}
