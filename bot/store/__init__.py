"""Everything that touches Redis lives here."""
