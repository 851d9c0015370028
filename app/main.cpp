// STUB (being written)
int main() { return 70; }
