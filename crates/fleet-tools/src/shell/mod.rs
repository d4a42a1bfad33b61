//! Reading shell command lines with a real parser (tree-sitter-bash): the simple commands a
//! line runs, with each word either known statically or marked unknown.
