package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/httpapi"
	"github.com/weft-run/weft/llm"
)

// POST /v1/agents/reload needs the operator role, answers what changed,
// serves the agents the reload gives from then on, says 422
// reload_failed with the file's position when the file fails, and 501 on
// a node without a spec file; it logs every outcome with the principal.
func TestReloadAgents(t *testing.T) {
	var f *fixture
	var fail error
	f = newFixture(t, fixtureOptions{reload: func(ctx context.Context) (any, error) {
		if fail != nil {
			return nil, fail
		}
		ag, err := f.rt.NewAgent("greeter", weft.AgentConfig{Model: llm.AlwaysText("hello")})
		if err != nil {
			return nil, err
		}
		if err := f.api.SetAgents([]*weft.Agent{ag}); err != nil {
			return nil, err
		}
		return map[string][]string{"added": {"greeter"}, "removed": {"ops"}}, nil
	}})
	if code, body := f.do(t, "POST", "/v1/agents/reload", viewerToken, nil); code != http.StatusForbidden {
		t.Fatalf("a viewer's reload: %d %s", code, body)
	}
	code, body := f.do(t, "POST", "/v1/agents/reload", operatorToken, nil)
	if code != http.StatusOK || !strings.Contains(string(body), `"added":["greeter"]`) {
		t.Fatalf("reload: %d %s", code, body)
	}
	if logs := f.logs.String(); !strings.Contains(logs, `msg="reloaded agents" principal=oscar changes="map[added:[greeter] removed:[ops]]"`) {
		t.Errorf("no log line of the reload:\n%s", logs)
	}
	if _, body := f.do(t, "GET", "/v1/agents", viewerToken, nil); !strings.Contains(string(body), `"name":"greeter"`) || strings.Contains(string(body), `"ops"`) {
		t.Errorf("agents after the reload: %s", body)
	}
	if code, body := f.do(t, "POST", "/v1/runs", operatorToken, `{"agent":"greeter","prompt":"hi"}`); code != http.StatusAccepted {
		t.Errorf("a start of the reloaded agent: %d %s", code, body)
	}
	fail = fmt.Errorf("%w: agents.yaml:7: agents[0].model.name: unknown provider", httpapi.ErrReloadFailed)
	code, body = f.do(t, "POST", "/v1/agents/reload", operatorToken, nil)
	if code != http.StatusUnprocessableEntity || !strings.Contains(string(body), `"code":"reload_failed"`) || !strings.Contains(string(body), "agents.yaml:7: agents[0].model.name") {
		t.Errorf("a failing file: %d %s", code, body)
	}
	if logs := f.logs.String(); !strings.Contains(logs, `msg="reload refused" principal=oscar err="reload failed: agents.yaml:7`) {
		t.Errorf("no log line of the refused reload:\n%s", logs)
	}
	fail = errors.New("the store is gone")
	if code, _ := f.do(t, "POST", "/v1/agents/reload", operatorToken, nil); code != http.StatusInternalServerError {
		t.Errorf("another failure: %d, want 500", code)
	}

	plain := newFixture(t, fixtureOptions{})
	if code, body := plain.do(t, "POST", "/v1/agents/reload", operatorToken, nil); code != http.StatusNotImplemented {
		t.Errorf("a node without a spec file: %d %s", code, body)
	}
}
