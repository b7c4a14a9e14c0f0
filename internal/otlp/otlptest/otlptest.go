// Package otlptest is a minimal OTLP/HTTP logs endpoint for tests (not a
// collector).
package otlptest

import (
	"io"
	"net/http"
	"sync"

	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/protobuf/proto"
)

// Receiver answers with Status, and keeps the records of the requests it
// accepts. Hold Mu to read or change its fields while it serves.
type Receiver struct {
	Mu     sync.Mutex
	Status int
	Got    []string // the command attribute of each record accepted
	IDs    []string // the tool_use_id attribute of each
	Res    []string // service.name of each resource
	Auth   []string // the Authorization header of each request
}

func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.Mu.Lock()
	defer rc.Mu.Unlock()
	rc.Auth = append(rc.Auth, r.Header.Get("Authorization"))
	if r.URL.Path != "/v1/logs" || rc.Status != http.StatusOK {
		w.WriteHeader(max(rc.Status, http.StatusNotFound))
		return
	}
	var req collogs.ExportLogsServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	for _, rl := range req.ResourceLogs {
		for _, a := range rl.Resource.GetAttributes() {
			if a.Key == "service.name" {
				rc.Res = append(rc.Res, a.Value.GetStringValue())
			}
		}
		for _, sl := range rl.ScopeLogs {
			for _, lr := range sl.LogRecords {
				for _, a := range lr.Attributes {
					switch a.Key {
					case "command":
						rc.Got = append(rc.Got, a.Value.GetStringValue())
					case "tool_use_id":
						rc.IDs = append(rc.IDs, a.Value.GetStringValue())
					}
				}
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}
