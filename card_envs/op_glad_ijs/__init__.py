"""Op Glad IJs (Gorilla auf Eis): slap an animal together with its habitat."""
