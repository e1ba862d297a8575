// Package pgerr tells which PostgreSQL errors mean "the database cannot be
// reached right now" rather than "this statement is wrong": the first kind
// is worth a retry (HTTP 503), the second is a bug or bad data.
package pgerr

import (
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
)

// unavailableCodes are SQLSTATEs a server sends while it cannot serve.
var unavailableCodes = map[string]bool{
	"57P01": true, // admin_shutdown
	"57P02": true, // crash_shutdown
	"57P03": true, // cannot_connect_now (starting up, recovering)
	"53300": true, // too_many_connections
}

// Unavailable reports whether err says the database could not be reached,
// or went away mid-statement: a refused or broken connection, a server
// shutting down or recovering.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return unavailableCodes[pgErr.Code] || pgErr.Code[:2] == "08" // connection_exception
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || pgconn.SafeToRetry(err)
}

// MarkUnavailable wraps err with sentinel when Unavailable(err) holds,
// keeping the cause, and returns any other error as it is. Adapters pass
// the sentinel their callers test for (events.ErrUnavailable); taking it
// as an argument keeps this package a helper over pgx alone.
func MarkUnavailable(err, sentinel error) error {
	if Unavailable(err) {
		return fmt.Errorf("%w: %w", sentinel, err)
	}
	return err
}
