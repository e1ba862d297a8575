package main

// publicEventTypes are the public event types a webhook endpoint may
// subscribe to (command.Config.PublicEventTypes). They are
// publicevents.Types once that package is merged (issue 24, helper D);
// until then an endpoint can subscribe to "*" only.
var publicEventTypes []string
