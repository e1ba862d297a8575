package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/invoicing/invoicing/internal/pgcluster"
)

// workDir makes a run's work directory and the service binary in it (or
// takes bin when given). cleanup removes the directory unless keep.
func workDir(ctx context.Context, out io.Writer, prefix, repo, bin string, keep bool) (work, service string, cleanup func(), err error) {
	work, err = os.MkdirTemp("", prefix)
	if err != nil {
		return "", "", nil, err
	}
	cleanup = func() { os.RemoveAll(work) }
	if keep {
		fmt.Fprintf(out, "work directory (kept): %s\n", work)
		cleanup = func() {}
	}
	if bin != "" {
		return work, bin, cleanup, nil
	}
	service = filepath.Join(work, "invoicing")
	fmt.Fprintf(out, "building ./cmd/invoicing from %s ...\n", sourceVersion(ctx, repo))
	if err := buildService(ctx, repo, service); err != nil {
		cleanup()
		return "", "", nil, err
	}
	return work, service, cleanup, nil
}

// buildService compiles the service from the module at repo into out.
func buildService(ctx context.Context, repo, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/invoicing")
	cmd.Dir = repo
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/invoicing: %w\n%s", err, buf.Bytes())
	}
	return nil
}

// sourceVersion says which source a build came from: the commit, and
// whether the working tree had uncommitted changes to tracked files.
func sourceVersion(ctx context.Context, repo string) string {
	head, err := exec.CommandContext(ctx, "git", "-C", repo, "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown (not a git checkout?)"
	}
	v := "commit " + strings.TrimSpace(string(head))
	if st, err := exec.CommandContext(ctx, "git", "-C", repo, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		v += " plus uncommitted changes"
	}
	return v
}

// service is a running `invoicing serve` subprocess.
type service struct {
	Bin     string
	Base    string // http://127.0.0.1:PORT
	LogPath string // its stderr (JSON logs)
	Started time.Time
	cmd     *exec.Cmd
	exited  chan struct{}
}

// serviceConfig is how a service is started.
type serviceConfig struct {
	Bin         string
	DatabaseURL string
	Secret      string // AUTH_HS256_SECRET
	LogLevel    string
	LogPath     string
	Env         []string // extra KEY=VALUE settings, after the ones above
}

// serviceEnv is the environment `serve` gets: the settings the README's
// table names and nothing else of the harness's environment but PATH and
// HOME, so a stray EVENTSTORE_URL cannot select another store.
func serviceEnv(cfg serviceConfig, addr string) []string {
	return append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"DATABASE_URL=" + cfg.DatabaseURL,
		"HTTP_ADDR=" + addr,
		"AUTH_HS256_SECRET=" + cfg.Secret,
		"LOG_LEVEL=" + cfg.LogLevel,
	}, cfg.Env...)
}

// startService starts `serve` on a free 127.0.0.1 port and returns once
// /healthz answers 200 (serve migrates before it listens). The child is
// killed by the kernel if the harness dies.
func startService(ctx context.Context, cfg serviceConfig) (*service, error) {
	port, err := pgcluster.FreePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	logFile, err := os.OpenFile(cfg.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(cfg.Bin, "serve")
	cmd.Env = serviceEnv(cfg, addr)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	s := &service{Bin: cfg.Bin, Base: "http://" + addr, LogPath: cfg.LogPath, cmd: cmd, exited: make(chan struct{})}
	if err := startLocked(cmd); err != nil {
		return nil, fmt.Errorf("start serve: %w", err)
	}
	s.Started = time.Now()
	go func() {
		_ = cmd.Wait()
		close(s.exited)
	}()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.Base+"/healthz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case <-s.exited:
			return nil, fmt.Errorf("serve exited during start-up (%v); log %s:\n%s", cmd.ProcessState, s.LogPath, tail(s.LogPath))
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("serve did not answer /healthz within 2 minutes; log %s:\n%s", s.LogPath, tail(s.LogPath))
		}
	}
}

// pid is the service's process id.
func (s *service) pid() int { return s.cmd.Process.Pid }

// stop sends SIGTERM (drain, stop the projectors, exit 0) and kills the
// process if it has not exited 40 s later.
func (s *service) stop() error {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(40 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
		return errors.New("serve did not stop within 40 s of SIGTERM; killed")
	}
	if !s.cmd.ProcessState.Success() {
		return fmt.Errorf("serve exited with %v; log %s:\n%s", s.cmd.ProcessState, s.LogPath, tail(s.LogPath))
	}
	return nil
}

// devToken runs `invoicing dev-token` for org with secret.
func devToken(ctx context.Context, bin, secret, org string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, "dev-token", "--org", org, "--ttl", "12h")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "AUTH_HS256_SECRET=" + secret}
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("dev-token: %w: %s", err, ee.Stderr)
		}
		return "", fmt.Errorf("dev-token: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// startLocked starts cmd from a goroutine locked to its OS thread, kept
// alive (never unlocked) until the harness exits: Pdeathsig fires when the
// forking thread ends, not the process (go.dev/issue/27505).
func startLocked(cmd *exec.Cmd) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		errc <- cmd.Start()
		select {} // hold the thread for the harness's lifetime
	}()
	return <-errc
}

// tail returns the end of a log file for an error message.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

// client calls the service as one account, over raw keep-alive
// connections (rawhttp.go): an idle one is taken for each request, or a new
// one dialed, and given back after the answer unless the server closes it.
type client struct {
	addr, auth string
	idle       chan *rawConn
}

// newClient returns a client keeping up to conns connections alive.
func newClient(base, token string, conns int) *client {
	return &client{addr: strings.TrimPrefix(base, "http://"), auth: "Bearer " + token, idle: make(chan *rawConn, conns*2)}
}

// statusError is an answer other than the expected status.
type statusError struct {
	Status int
	Code   string // the error body's code, when it has one
}

func (e *statusError) Error() string { return fmt.Sprintf("HTTP %d %s", e.Status, e.Code) }

// send sends one request and returns a copy of the body when the status is
// want. The error text is short and free of ids, so that errors can be
// counted by it.
func (c *client) send(ctx context.Context, method, path string, body []byte, idemKey string, want int) ([]byte, error) {
	var out []byte
	err := c.do(ctx, request{method: method, path: path, body: body, idemKey: idemKey}, want, func(b []byte) { out = bytes.Clone(b) })
	return out, err
}

// expect sends one request whose body is not needed, only its status.
func (c *client) expect(ctx context.Context, method, path string, want int) error {
	return c.do(ctx, request{method: method, path: path}, want, func([]byte) {})
}

func (c *client) do(ctx context.Context, req request, want int, keep func(body []byte)) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("transport: %w", err)
	}
	rc, err := c.conn()
	if err != nil {
		return fmt.Errorf("transport: %w", err)
	}
	req.host, req.auth = c.addr, c.auth
	status, err := rc.roundTrip(req)
	if err != nil {
		rc.conn.Close()
		return fmt.Errorf("transport: %w", err)
	}
	if status != want {
		var e struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(rc.body, &e)
		c.release(rc)
		return &statusError{Status: status, Code: e.Error.Code}
	}
	keep(rc.body)
	c.release(rc)
	return nil
}

func (c *client) conn() (*rawConn, error) {
	select {
	case rc := <-c.idle:
		return rc, nil
	default:
		return dialRaw(c.addr)
	}
}

func (c *client) release(rc *rawConn) {
	if rc.close {
		rc.conn.Close()
		return
	}
	select {
	case c.idle <- rc:
	default:
		rc.conn.Close()
	}
}

// Close closes the idle connections.
func (c *client) Close() {
	for {
		select {
		case rc := <-c.idle:
			rc.conn.Close()
		default:
			return
		}
	}
}

// id reads the "id" of a resource body.
func id(body []byte) (string, error) {
	// The API writes "id" first: reading members up to it spares the load
	// generator a scan of the whole body (a quarter of its CPU in the
	// create phase, on the cores the service and PostgreSQL share).
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", fmt.Errorf("no id in %.200s", body)
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return "", fmt.Errorf("no id in %.200s: %w", body, err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return "", fmt.Errorf("no id in %.200s: %w", body, err)
		}
		if key != "id" {
			continue
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil || s == "" {
			return "", fmt.Errorf("no id in %.200s", body)
		}
		return s, nil
	}
	return "", fmt.Errorf("no id in %.200s", body)
}

// nextCursor reads pagination.next_cursor of a list body ("" on the last
// page) and how many items it holds.
func nextCursor(body []byte) (cursor string, items int, err error) {
	var v struct {
		Data       []json.RawMessage `json:"data"`
		Pagination struct {
			NextCursor *string `json:"next_cursor"`
		} `json:"pagination"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return "", 0, fmt.Errorf("list body: %w", err)
	}
	if v.Pagination.NextCursor != nil {
		cursor = *v.Pagination.NextCursor
	}
	return cursor, len(v.Data), nil
}
