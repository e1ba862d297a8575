package pgstore

// Appenders is how many batches can be written at once.
const Appenders = appenders

// The internal tests' helpers, for the external ones.
var (
	WakeOnlyStore   = wakeOnlyStore
	OwnReadsStore   = ownReadsStore
	HoldTransaction = holdTransaction
	DrainUntil      = drainUntil
)
