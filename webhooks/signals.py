from django.dispatch import Signal

# Sent once the transaction that wrote deliveries has committed, with ``delivery_ids``.
deliveries_ready = Signal()
