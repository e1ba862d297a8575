package pgtest

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
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	readyTimeout = 30 * time.Second // postmaster start to first accepted connection
	stopTimeout  = 10 * time.Second // SIGINT (fast shutdown) to SIGKILL
	bindAttempts = 3                // another process may take the free port first
)

// serverSettings favour speed over durability: the cluster is thrown away.
var serverSettings = []string{
	"fsync=off",
	"synchronous_commit=off",
	"full_page_writes=off",
	"max_connections=300",
	"shared_buffers=128MB",
	// Segments in the data directory rather than /dev/shm: nothing is left in
	// /dev/shm by a killed run, and a small /dev/shm (64 MB in Docker) is no
	// limit on parallel queries.
	"dynamic_shared_memory_type=mmap",
}

// server is a throwaway cluster owned by this test process.
type server struct {
	dir    string          // temporary directory: data/, sock/, postgres.log
	url    string          // admin connection string
	proc   *os.Process     // the postmaster
	exited <-chan struct{} // closed once the postmaster has exited
}

// startServer initialises a cluster in a new temporary directory and starts a
// postmaster on a free 127.0.0.1 port, as an unprivileged user when root.
func startServer() (*server, error) {
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
	s := &server{dir: dir}
	owner := []byte(strconv.Itoa(os.Getpid()) + "\n")
	if err := os.WriteFile(filepath.Join(dir, ownerFile), owner, 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.prepare(bin, cred); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		err = s.launch(bin, cred)
		if err == nil {
			return s, nil
		}
		s.kill()
		if attempt == bindAttempts || !strings.Contains(s.logTail(), "could not bind") {
			os.RemoveAll(dir)
			return nil, err
		}
	}
}

// prepare creates the socket directory and runs initdb.
func (s *server) prepare(bin string, cred *syscall.Credential) error {
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

// launch starts the postmaster on a free port and waits until it answers.
func (s *server) launch(bin string, cred *syscall.Credential) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	logFile, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close() // the child holds its own descriptor
	args := []string{"-D", filepath.Join(s.dir, "data"), "-h", "127.0.0.1",
		"-p", strconv.Itoa(port), "-k", filepath.Join(s.dir, "sock")}
	for _, setting := range serverSettings {
		args = append(args, "-c", setting)
	}
	cmd := s.command(cred, filepath.Join(bin, "postgres"), args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	s.exited, err = startLocked(cmd)
	if err != nil {
		return fmt.Errorf("starting postgres: %w", err)
	}
	s.proc = cmd.Process
	s.url = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	return s.waitReady()
}

// command builds a child command that is killed if this process dies and runs
// as cred when cred is not nil.
func (s *server) command(cred *syscall.Credential, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = s.dir // a working directory the unprivileged user can enter
	cmd.Env = append(os.Environ(), "LC_ALL=C")
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

// waitReady polls the server with real connections until one succeeds.
func (s *server) waitReady() error {
	deadline := time.Now().Add(readyTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, s.url)
		if err == nil {
			err = conn.Ping(ctx)
			conn.Close(ctx)
		}
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("postgres exited during start-up; log %s:\n%s", s.logPath(), s.logTail())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres not ready after %v (last error: %v); log %s:\n%s",
				readyTimeout, err, s.logPath(), s.logTail())
		}
	}
}

// stop asks for a fast shutdown (SIGINT), kills after stopTimeout, and
// removes the temporary directory.
func (s *server) stop() error {
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
func (s *server) kill() {
	if s.proc == nil {
		return
	}
	_ = s.proc.Kill() // fails only if it has already exited
	<-s.exited
}

func (s *server) logPath() string { return filepath.Join(s.dir, "postgres.log") }

// logTail returns the end of the server log, for error messages.
func (s *server) logTail() string {
	b, err := os.ReadFile(s.logPath())
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	const limit = 4000
	if len(b) > limit {
		b = b[len(b)-limit:]
	}
	return string(b)
}

// freePort asks the kernel for a free TCP port on 127.0.0.1.
func freePort() (int, error) {
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
		"to run it as: create one (useradd --system postgres), run the tests as a non-root user, or set " + EnvURL)
}
