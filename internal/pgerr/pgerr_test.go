package pgerr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestUnavailable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"recovering", &pgconn.PgError{Code: "57P03"}, true},
		{"a connection exception", &pgconn.PgError{Code: "08006"}, true},
		{"too many connections", &pgconn.PgError{Code: "53300"}, true},
		{"a connection closed mid-statement", fmt.Errorf("query: %w", io.ErrUnexpectedEOF), true},
		{"a unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"a data exception", &pgconn.PgError{Code: "22P05"}, false},
		{"a serialization failure", &pgconn.PgError{Code: "40001"}, false},
		{"no rows", pgx.ErrNoRows, false},
		{"a plain error", errors.New("boom"), false},
	}
	for _, tt := range tests {
		if got := Unavailable(tt.err); got != tt.want {
			t.Errorf("%s: Unavailable(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

func TestARefusedConnectionIsUnavailable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Port 1 on loopback: nothing listens, the kernel refuses at once.
	_, err := pgx.Connect(ctx, "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
	if err == nil || !Unavailable(err) {
		t.Fatalf("connect to a closed port: %v; want an error Unavailable recognises", err)
	}
}
