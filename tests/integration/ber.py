"""BER for the tests' raw LDAP clients (proxy_client.py, bindlim_client.py,
substr_client.py): what they send that libldap would not (a PROXY header first, a chosen
source address, filters RFC 4515 cannot write), encoded by hand, and the messages read
back. Definite lengths only, as LDAP uses (RFC 4511 5.1)."""


def tlv(tag, body):
    """One element: tag, its definite length (short or long form), body."""
    n = len(body)
    if n < 0x80:
        return bytes([tag, n]) + body
    b = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(b)]) + b + body


def integer(tag, v):
    """A non-negative INTEGER (or ENUMERATED) v under tag, in its shortest form."""
    return tlv(tag, v.to_bytes(max(1, (v.bit_length() + 8) // 8), "big"))


def message(msgid, op):
    """An LDAPMessage: the message ID, then op (a protocolOp element)."""
    return tlv(0x30, integer(0x02, msgid) + op)


def read_message(f):
    """One LDAPMessage from the binary file f (a socket's makefile("rb")): its protocolOp's
    (tag, content), or None at the end of the stream."""
    head = f.read(2)
    if len(head) < 2:
        return None
    n = head[1]
    if n & 0x80:
        n = int.from_bytes(f.read(n & 0x7F), "big")
    body = f.read(n)
    i = 2 + body[1]  # past the message ID
    tag = body[i]
    ln = body[i + 1]
    j = i + 2
    if ln & 0x80:
        ln, j = int.from_bytes(body[j:j + (ln & 0x7F)], "big"), j + (ln & 0x7F)
    return tag, body[j:j + ln]


def search_done(f, done=(0x65,)):
    """Reads f's messages until one whose protocolOp tag is in done (SearchResultDone by
    default): (entries before it, its resultCode), or None when the stream ends first."""
    entries = 0
    while True:
        m = read_message(f)
        if m is None:
            return None
        tag, content = m
        if tag in done:
            return entries, content[2]  # resultCode: ENUMERATED, one byte
        entries += tag == 0x64  # SearchResultEntry
