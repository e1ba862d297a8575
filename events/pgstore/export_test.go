package pgstore

// Appenders is how many batches can be written at once.
const Appenders = appenders
