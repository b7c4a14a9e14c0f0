package approvals

import (
	"fmt"
	"strings"
)

// Recommend turns the approval log into suggested grants.
func ExampleRecommend() {
	log := `{"tool":"Bash","key":"npm run build","decision":"once","time":"2025-06-01T12:00:00Z","session":"a"}
{"tool":"Bash","key":"npm run test","decision":"once","time":"2025-06-01T12:01:00Z","session":"a"}
{"tool":"Bash","key":"npm run build","decision":"session","time":"2025-06-02T09:00:00Z","session":"b"}
{"tool":"Bash","key":"python3 x.py","decision":"once","time":"2025-06-02T09:00:00Z","session":"b"}
{"tool":"Bash","key":"python3 y.py","decision":"once","time":"2025-06-02T09:00:00Z","session":"b"}
`
	approved, err := Read(strings.NewReader(log))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range Recommend(approved) {
		fmt.Println(r.Grant, "-", r.Reason)
		fmt.Println("  evidence:", strings.Join(r.Evidence, "; "))
	}
	// Output:
	// command(npm run) - approved 3 times in 2 distinct command lines starting with `npm run`
	//   evidence: npm run build; npm run test
}
