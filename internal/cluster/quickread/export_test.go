package quickread

// LocalSection is localSection for the mirror test, which imports package local (an external
// test: local imports this package).
type LocalSection = localSection
