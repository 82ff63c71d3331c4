package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// recorder is a ResponseWriter that keeps what the API answered.
type recorder struct {
	h    http.Header
	code int
	body bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.h }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}

// apiError is an error answer of the API.
type apiError struct {
	Status  int
	Code    string
	Message string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

// errSignedOut: the API refused the cookie's token (401).
var errSignedOut = errors.New("console: signed out")

// call sends one request to the API in-process with token as the bearer
// token and decodes its JSON answer into out (nil: ignored).
func (c *Console) call(ctx context.Context, token, method, path string, query url.Values, body any, out any) error {
	var rd *bytes.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	u := path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	req.RemoteAddr = "console"
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := &recorder{h: http.Header{}}
	c.api.ServeHTTP(rec, req)
	if rec.code == 0 {
		rec.code = http.StatusOK
	}
	if rec.code == http.StatusUnauthorized {
		return errSignedOut
	}
	if rec.code >= 300 {
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if err := json.Unmarshal(rec.body.Bytes(), &e); err != nil || e.Error.Message == "" {
			// Not the API's JSON error (a mux 404 or 405, a plain
			// http.Error): its text is the message.
			e.Error.Message = strings.TrimSpace(rec.body.String())
		}
		return &apiError{Status: rec.code, Code: e.Error.Code, Message: e.Error.Message}
	}
	if out != nil {
		return json.Unmarshal(rec.body.Bytes(), out)
	}
	return nil
}

// principal is who the API says the caller is.
type principal struct {
	Name          string   `json:"principal"`
	Roles         []string `json:"roles"`
	Authenticated bool     `json:"authenticated"`
}

func (p principal) approver() bool { return slices.Contains(p.Roles, "approver") }

// whoami asks the API who token is.
func (c *Console) whoami(ctx context.Context, token string) (principal, error) {
	var p principal
	err := c.call(ctx, token, "GET", "/v1/whoami", nil, nil, &p)
	return p, err
}
