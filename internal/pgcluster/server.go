package pgcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	readyTimeout  = 30 * time.Second // postmaster start to first accepted connection
	stopTimeout   = 10 * time.Second // SIGINT (fast) or SIGQUIT (immediate shutdown) to SIGKILL
	bindAttempts  = 3                // another process may take the free port first
	rebindTimeout = 10 * time.Second // a restart's port may be briefly held by another socket
)

// Cluster is a throwaway PostgreSQL cluster owned by this process: system
// binaries, a new temporary directory, a free 127.0.0.1 port, an
// unprivileged user when root. Stop it when done. If the process dies
// first, the kernel kills the postmaster (Linux) and the next Start of any
// cluster deletes the directory.
type Cluster struct {
	dir      string              // temporary directory: data/, sock/, postgres.log
	bin      string              // directory holding initdb and postgres
	cred     *syscall.Credential // who runs them; nil: this process's user
	settings []string            // -c settings of the postmaster
	env      []string            // added to the environment of its commands
	port     int                 // 127.0.0.1 port, kept across restarts
	url      string              // admin connection string
	proc     *os.Process         // the postmaster
	exited   <-chan struct{}     // closed once the postmaster has exited
}

// Start initialises a cluster in a new temporary directory and starts a
// postmaster on a free 127.0.0.1 port that gets each of settings as a -c
// option (e.g. "max_connections=200"), as an unprivileged user when root.
// With no settings the server runs with PostgreSQL's defaults: fsync,
// synchronous_commit and full_page_writes on.
func Start(settings []string) (*Cluster, error) {
	return StartWith(Options{Settings: settings})
}

// Options are what StartWith starts a cluster with.
type Options struct {
	// Settings are the postmaster's -c settings, as Start's.
	Settings []string
	// HugePages, when set, is told after initdb how many huge pages the
	// server's shared memory takes with Settings (PostgreSQL's
	// shared_memory_size_in_huge_pages) and answers whether that many are
	// there for it: the server then starts with huge_pages=on, else with
	// huge_pages=off. It is not called where PostgreSQL has no huge pages
	// (not Linux); the server then starts with huge_pages=off.
	HugePages func(need int) (bool, error)
	// Env is added to the environment of the server's processes, as
	// NAME=value: what the server reads from there rather than from
	// settings, such as glibc's malloc tunables.
	Env []string
}

// StartWith is Start with the options of o.
func StartWith(o Options) (*Cluster, error) {
	settings := slices.Clone(o.Settings)
	bin, err := findBinDir()
	if err != nil {
		return nil, err
	}
	cred, err := unprivileged()
	if err != nil {
		return nil, err
	}
	removeStale()
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	s := &Cluster{dir: dir, bin: bin, cred: cred, settings: settings, env: slices.Clone(o.Env)}
	owner := []byte(strconv.Itoa(os.Getpid()) + "\n")
	if err := os.WriteFile(filepath.Join(dir, ownerFile), owner, 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.prepare(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if o.HugePages != nil {
		setting, err := s.hugePagesSetting(o.HugePages)
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		s.settings = append(s.settings, setting)
	}
	for attempt := 1; ; attempt++ {
		port, err := FreePort()
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		logged := s.logSize()
		_, err = s.launch(port)
		if err == nil {
			return s, nil
		}
		s.kill()
		if attempt == bindAttempts || !s.bindFailedSince(logged) {
			os.RemoveAll(dir)
			return nil, err
		}
	}
}

// Restart starts the postmaster again on its port and data directory, after
// it has exited (crash recovery runs first if it was stopped immediately),
// and returns when it first accepted a connection. The port may be briefly
// held by another socket (a client's ephemeral port), so a failed bind is
// retried until rebindTimeout.
func (s *Cluster) Restart() (time.Time, error) {
	deadline := time.Now().Add(rebindTimeout)
	for {
		logged := s.logSize()
		accepted, err := s.launch(s.port)
		if err == nil {
			return accepted, nil
		}
		s.kill()
		if !s.bindFailedSince(logged) || time.Now().After(deadline) {
			return time.Time{}, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// prepare creates the socket directory and runs initdb.
func (s *Cluster) prepare() error {
	bin, cred := s.bin, s.cred
	if err := os.Mkdir(filepath.Join(s.dir, "sock"), 0o700); err != nil {
		return err
	}
	if cred != nil {
		for _, p := range []string{s.dir, filepath.Join(s.dir, "sock")} {
			if err := os.Chown(p, int(cred.Uid), int(cred.Gid)); err != nil {
				return err
			}
		}
	}
	var out bytes.Buffer
	cmd := s.command(cred, filepath.Join(bin, "initdb"),
		"-D", filepath.Join(s.dir, "data"), "--auth=trust", "-U", "postgres",
		"--encoding=UTF8", "--locale=C", "--no-sync")
	cmd.Stdout, cmd.Stderr = &out, &out
	exited, err := startLocked(cmd)
	if err != nil {
		return fmt.Errorf("starting initdb: %w", err)
	}
	<-exited
	if !cmd.ProcessState.Success() {
		hint := ""
		if cred != nil {
			hint = fmt.Sprintf(" (it runs as uid %d, which must be able to reach %s; set TMPDIR elsewhere if not)", cred.Uid, s.dir)
		}
		return fmt.Errorf("initdb failed: %v%s\n%s", cmd.ProcessState, hint, out.Bytes())
	}
	return nil
}

// launch starts the postmaster on port and waits until it answers; it
// returns when the server first accepted a connection.
func (s *Cluster) launch(port int) (time.Time, error) {
	logFile, err := os.OpenFile(s.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return time.Time{}, err
	}
	defer logFile.Close() // the child holds its own descriptor
	args := []string{"-D", filepath.Join(s.dir, "data"), "-h", "127.0.0.1",
		"-p", strconv.Itoa(port), "-k", filepath.Join(s.dir, "sock")}
	for _, setting := range s.settings {
		args = append(args, "-c", setting)
	}
	cmd := s.command(s.cred, filepath.Join(s.bin, "postgres"), args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	s.exited, err = startLocked(cmd)
	if err != nil {
		return time.Time{}, fmt.Errorf("starting postgres: %w", err)
	}
	s.proc = cmd.Process
	s.port = port
	s.url = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	return s.waitReady()
}

// command builds a child command that is killed if this process dies and runs
// as cred when cred is not nil.
func (s *Cluster) command(cred *syscall.Credential, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = s.dir // a working directory the unprivileged user can enter
	cmd.Env = append(append(os.Environ(), "LC_ALL=C"), s.env...)
	cmd.SysProcAttr = sysProcAttr(cred)
	return cmd
}

// startLocked starts cmd from a goroutine locked to its OS thread and keeps
// that thread alive until the process exits: the kernel sends Pdeathsig when
// the thread that forked the child ends, not the process (go.dev/issue/27505).
// The returned channel is closed once the process has exited and been reaped.
func startLocked(cmd *exec.Cmd) (<-chan struct{}, error) {
	errc := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if err := cmd.Start(); err != nil {
			errc <- err
			return
		}
		errc <- nil
		_ = cmd.Wait() // the outcome is in cmd.ProcessState
		close(exited)
	}()
	return exited, <-errc
}

// waitReady polls the server with real connections until one succeeds, and
// returns when that connection was accepted.
func (s *Cluster) waitReady() (time.Time, error) {
	deadline := time.Now().Add(readyTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, s.url)
		accepted := time.Now()
		if err == nil {
			err = conn.Ping(ctx)
			conn.Close(ctx)
		}
		cancel()
		if err == nil {
			return accepted, nil
		}
		select {
		case <-s.exited:
			return time.Time{}, fmt.Errorf("postgres exited during start-up; log %s:\n%s", s.LogPath(), s.LogTail())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("postgres not ready after %v (last error: %v); log %s:\n%s",
				readyTimeout, err, s.LogPath(), s.LogTail())
		}
	}
}

// StopImmediate sends SIGQUIT to the postmaster, as `pg_ctl stop -m
// immediate` does: every backend quits at once, with no checkpoint, so the
// next start runs crash recovery. It waits for the postmaster to exit,
// which it does only after its children have, and kills it after
// stopTimeout.
func (s *Cluster) StopImmediate() error {
	if err := s.proc.Signal(syscall.SIGQUIT); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-s.exited:
		return nil
	case <-time.After(stopTimeout):
		s.kill()
		return fmt.Errorf("no exit %v after SIGQUIT; sent SIGKILL", stopTimeout)
	}
}

// Stop asks for a fast shutdown (SIGINT), kills after stopTimeout (10 s),
// and deletes the cluster's directory.
func (s *Cluster) Stop() error {
	var errs []error
	if err := s.proc.Signal(os.Interrupt); err != nil && !errors.Is(err, os.ErrProcessDone) {
		errs = append(errs, err)
	}
	select {
	case <-s.exited:
	case <-time.After(stopTimeout):
		errs = append(errs, fmt.Errorf("no exit %v after SIGINT; sent SIGKILL", stopTimeout))
		s.kill()
	}
	errs = append(errs, os.RemoveAll(s.dir))
	return errors.Join(errs...)
}

// kill ends a postmaster that may still be running and waits for it.
func (s *Cluster) kill() {
	if s.proc == nil {
		return
	}
	_ = s.proc.Kill() // fails only if it has already exited
	<-s.exited
}

// logSize returns the current length of the server log (0 before the first
// start).
func (s *Cluster) logSize() int64 {
	fi, err := os.Stat(s.LogPath())
	if err != nil {
		return 0
	}
	return fi.Size()
}

// bindFailedSince reports whether the log, past offset, says the postmaster
// could not bind its port (another process holds it).
func (s *Cluster) bindFailedSince(offset int64) bool {
	b, err := os.ReadFile(s.LogPath())
	if err != nil || int64(len(b)) < offset {
		return false
	}
	return bytes.Contains(b[offset:], []byte("could not bind"))
}

// LogTail returns the end of the server log, for error messages.
func (s *Cluster) LogTail() string {
	b, err := os.ReadFile(s.LogPath())
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	const limit = 4000
	if len(b) > limit {
		b = b[len(b)-limit:]
	}
	return string(b)
}

// FreePort asks the kernel for a free TCP port on 127.0.0.1. Another
// process may take it before the caller binds it: retry on a failed bind.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// unprivileged returns the credentials to run PostgreSQL with when this
// process is root (PostgreSQL refuses to run as root), or nil otherwise.
func unprivileged() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil {
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("running as root, which PostgreSQL refuses, and neither user postgres nor nobody exists " +
		"to run it as: create one (useradd --system postgres), run the tests as a non-root user, or set " + envTestURL)
}
