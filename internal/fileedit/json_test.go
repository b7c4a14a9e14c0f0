package fileedit

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestAppendItem(t *testing.T) {
	tests := []struct {
		in, path string // path: member keys to the container, "." separated; "" is the root
		key      string
		want     string
	}{
		{`{}`, "", "a", "{\n  \"a\": [\n    1\n  ]\n}"},
		{"{\n}\n", "", "a", "{\n  \"a\": [\n    1\n  ]\n}\n"},
		{`{"x": 1}`, "", "a", `{"x": 1, "a": [1]}`},
		{"{\n  \"x\": 1\n}\n", "", "a", "{\n  \"x\": 1,\n  \"a\": [\n    1\n  ]\n}\n"},
		{"{\n\t\"x\": {\n\t\t\"y\": 2\n\t}\n}", "x", "a", "{\n\t\"x\": {\n\t\t\"y\": 2,\n\t\t\"a\": [\n\t\t\t1\n\t\t]\n\t}\n}"},
		{"{\n    \"x\": {}\n}", "x", "a", "{\n    \"x\": {\n        \"a\": [\n            1\n        ]\n    }\n}"},
		{`{"x": [2, 3]}`, "x", "", `{"x": [2, 3, [1]]}`},
		{"{\"x\": [\n  2\n]}", "x", "", "{\"x\": [\n  2,\n  [\n    1\n  ]\n]}"},
		{`{"x": "a,b:c", "y": {}}`, "y", "a<b", `{"x": "a,b:c", "y": {"a<b": [1]}}`},
	}
	for _, tc := range tests {
		t.Logf("input: %q %q", tc.in, tc.path)
		data := []byte(tc.in)
		root, err := ParseJSON("f", data)
		if err != nil {
			t.Fatal(err)
		}
		c := root
		if tc.path != "" {
			for _, k := range strings.Split(tc.path, ".") {
				c = c.Member(k)
			}
		}
		got, err := Append(data, root, c, tc.key, []int{1})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("got\n%s\nwant\n%s", got, tc.want)
		}
		if _, err := ParseJSON("f", got); err != nil {
			t.Errorf("not JSON: %v", err)
		}
	}
}

func TestRemoveItem(t *testing.T) {
	tests := []struct {
		in   string
		i    int
		want string
	}{
		{`[1]`, 0, `[]`},
		{`[1, 2, 3]`, 0, `[2, 3]`},
		{`[1, 2, 3]`, 1, `[1, 3]`},
		{`[1, 2, 3]`, 2, `[1, 2]`},
		{"[\n  1,\n  2\n]", 1, "[\n  1\n]"},
		{"[\n  1,\n  2\n]", 0, "[\n  2\n]"},
		{`{"a": 1, "b": {"c": [1, "]"]}}`, 1, `{"a": 1}`},
		{`{"a": "\"}", "b": 2}`, 0, `{"b": 2}`},
	}
	for _, tc := range tests {
		t.Logf("input: %q %d", tc.in, tc.i)
		data := []byte(tc.in)
		root, err := ParseJSON("f", data)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(Remove(data, root, tc.i)); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

func TestParseDocError(t *testing.T) {
	tests := []struct{ in, want string }{
		{"{\n  \"a\": 1,\n}", "f:3:1: invalid character '}' looking for beginning of object key string"},
		{"{\"a\": ", "f:1:6: unexpected end of JSON input"},
		{"", "f:1:1: unexpected end of JSON input"},
		{"{} x", "f:1:4: invalid character 'x' after top-level value"},
	}
	for _, tc := range tests {
		t.Logf("input: %q", tc.in)
		_, err := ParseJSON("f", []byte(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("got %v, want %s", err, tc.want)
		}
	}
}

// Gemini CLI reads its settings through strip-json-comments: // and /* */
// comments, none inside strings; they are blanked for the scan, so spans
// and error positions are those of the file as written.
func TestParseDocComments(t *testing.T) {
	tests := []struct {
		in      string
		hooks   string // the bytes of member "hooks", or the error
		wantErr bool
	}{
		{in: `{"hooks": 1}`, hooks: `1`},
		{in: "// c\n{\"hooks\": /* x */ [1] // y\n}", hooks: `[1]`},
		{in: "{\"a\": \"// not\", \"hooks\": \"/* not */\"}", hooks: `"/* not */"`},
		{in: "{\"a\": \"\\\" // not\", \"hooks\": {\"b\": 1 /* in */}}", hooks: `{"b": 1 /* in */}`},
		{in: "/* a\n b */ {\"hooks\": []}", hooks: `[]`},
		{in: "{\"hooks\": 1 /* open", wantErr: true},
		{in: "{\"hooks\": 1,}", wantErr: true}, // no trailing commas
		{in: "// only a comment", wantErr: true},
	}
	for _, tc := range tests {
		t.Logf("input: %q", tc.in)
		root, err := ParseJSONC("f", []byte(tc.in))
		if tc.wantErr {
			if err == nil {
				t.Errorf("no error")
			}
			continue
		}
		if err != nil {
			t.Errorf("error: %v", err)
			continue
		}
		v := root.Member("hooks")
		if v == nil || tc.in[v.Start:v.End] != tc.hooks {
			t.Errorf("hooks = %v, want %q", v, tc.hooks)
		}
		if _, err := ParseJSON("f", []byte(tc.in)); err == nil && strings.Contains(tc.in, "/") && tc.in != "{\"a\": \"// not\", \"hooks\": \"/* not */\"}" {
			t.Errorf("parseDoc accepted comments")
		}
	}
	// decoded reads a value with comments inside it.
	data := []byte("{\"hooks\": {\"b\": 1 /* in */}}")
	root, _ := ParseJSONC("f", data)
	if got := Decoded(data, root.Member("hooks")); !reflect.DeepEqual(got, map[string]any{"b": 1.0}) {
		t.Errorf("decoded = %v", got)
	}
}

// TestDuplicateKey: an object with a key twice is refused wherever it is,
// naming both lines: the agents read the last of the two, and an edit of
// the first would change nothing they read. Keys are compared as decoded.
func TestDuplicateKey(t *testing.T) {
	tests := []struct {
		in   string
		want string // the error's text after "f:"
	}{
		{in: "{\n  \"hooks\": {},\n  \"env\": {},\n  \"hooks\": {}\n}", want: `4:3: duplicate key "hooks" (first at line 2)`},
		{in: `{"a": {"b": 1, "b": 2}}`, want: `1:16: duplicate key "b" (first at line 1)`},
		{in: `[{"x": 1}, {"x": 1, "x": 2}]`, want: `1:21: duplicate key "x" (first at line 1)`},
		{in: `{"hooks": 1, "\u0068ooks": 2}`, want: `1:14: duplicate key "hooks" (first at line 1)`},
		{in: `{"a": {"x": 1}, "b": {"x": 1}}`},
		{in: `{"hooks": 1, "Hooks": 2}`},
	}
	for _, tc := range tests {
		t.Logf("input: %q", tc.in)
		for _, parse := range []func(string, []byte) (*Value, error){ParseJSON, ParseJSONC} {
			_, err := parse("f", []byte(tc.in))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error: %v", err)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), "f:"+tc.want) || !errors.Is(err, ErrDuplicateKey)):
				t.Errorf("got %v, want f:%s", err, tc.want)
			}
		}
	}
}

// TestAppendAllRemoveAll: AppendAll is that many Appends, RemoveAll that
// many Removes (from the last index down), and removing what was appended
// gives the bytes back.
func TestAppendAllRemoveAll(t *testing.T) {
	items := []any{"Bash(rm -r /)", "Bash(git push --force *)", "a\"b"}
	for _, in := range []string{
		`{"p": []}`,
		`{"p": ["x"]}`,
		"{\n  \"p\": []\n}\n",
		"{\n  \"p\": [\n    \"x\"\n  ]\n}\n",
		"{\n\t\"p\": [\"x\", \"y\"]\n}",
		"{\n  \"p\": [\n    \"x\", // mine\n    \"y\"\n  ]\n}\n",
	} {
		t.Logf("input: %q", in)
		parse := func(data []byte) (*Value, *Value) {
			root, err := ParseJSONC("f", data)
			if err != nil {
				t.Fatal(err)
			}
			return root, root.Member("p")
		}
		data := []byte(in)
		root, arr := parse(data)
		got, err := AppendAll(data, root, arr, items)
		if err != nil {
			t.Fatal(err)
		}
		want := data
		for _, it := range items {
			root, arr := parse(want)
			if want, err = Append(want, root, arr, "", it); err != nil {
				t.Fatal(err)
			}
		}
		if string(got) != string(want) {
			t.Errorf("AppendAll:\n%s\nAppends:\n%s", got, want)
		}
		_, arr = parse(got)
		n := len(arr.Elems)
		var idx []int
		for i := n - len(items); i < n; i++ {
			idx = append(idx, i)
		}
		back := RemoveAll(got, arr, idx)
		if string(back) != in {
			t.Errorf("RemoveAll of what was appended:\n%s\nwant the input back", back)
		}
		// Removing every other item matches Removes from the end.
		_, arr = parse(got)
		var odd []int
		seq := got
		for i := n - 1; i >= 0; i-- {
			if i%2 == 1 {
				_, a := parse(seq)
				seq = Remove(seq, a, i)
			}
		}
		for i := 1; i < n; i += 2 {
			odd = append(odd, i)
		}
		if b := RemoveAll(got, arr, odd); string(b) != string(seq) {
			t.Errorf("RemoveAll %v:\n%s\nRemoves:\n%s", odd, b, seq)
		}
	}
}
