package main

import "github.com/invoicing/invoicing/publicevents"

// publicEventTypes are the public event types a webhook endpoint may
// subscribe to (command.Config.PublicEventTypes); a variable so that a test
// may name its own.
var publicEventTypes = publicevents.Types
