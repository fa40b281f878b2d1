"""Database helpers that belong to no app (imports none of ours): apps and backoffice may use them."""
