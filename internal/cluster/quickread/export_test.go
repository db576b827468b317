package quickread

// LocalSection is localSection for the mirror test, which imports package localkube (an external
// test: localkube imports this package).
type LocalSection = localSection
