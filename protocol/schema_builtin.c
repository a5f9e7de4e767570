#include "protocol/schema_builtin.h"

/*
 * The definitions schema_load adds before any .schema file (schema_builtin.h):
 * operational attributes and classes servers define themselves (slapd has them
 * built in, so the .schema files do not carry them). Texts from RFC 4512
 * (subschema, features), RFC 4530 (entryUUID), RFC 5020 (entryDN), RFC 3045
 * (vendor), draft-boreham-numsubordinates and draft-behera-ldap-password-policy;
 * authzTo as slapd names it (OpenLDAP's arc).
 */
const char *const schema_builtin_attrs[] = {
    /* RFC 2307's uidNumber and gidNumber, as slapd builds them in: with ordering. */
    "( 1.3.6.1.1.1.1.0 NAME 'uidNumber' EQUALITY integerMatch ORDERING integerOrderingMatch "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )",
    "( 1.3.6.1.1.1.1.1 NAME 'gidNumber' EQUALITY integerMatch ORDERING integerOrderingMatch "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )",
    "( 2.5.4.0 NAME 'objectClass' EQUALITY objectIdentifierMatch "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.38 )",
    "( 2.5.21.9 NAME 'structuralObjectClass' EQUALITY objectIdentifierMatch "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.38 SINGLE-VALUE NO-USER-MODIFICATION "
    "USAGE directoryOperation )",
    "( 2.5.18.1 NAME 'createTimestamp' EQUALITY generalizedTimeMatch "
    "ORDERING generalizedTimeOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.24 "
    "SINGLE-VALUE NO-USER-MODIFICATION USAGE directoryOperation )",
    "( 2.5.18.2 NAME 'modifyTimestamp' EQUALITY generalizedTimeMatch "
    "ORDERING generalizedTimeOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.24 "
    "SINGLE-VALUE NO-USER-MODIFICATION USAGE directoryOperation )",
    "( 2.5.18.3 NAME 'creatorsName' EQUALITY distinguishedNameMatch "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.12 SINGLE-VALUE NO-USER-MODIFICATION "
    "USAGE directoryOperation )",
    "( 2.5.18.4 NAME 'modifiersName' EQUALITY distinguishedNameMatch "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.12 SINGLE-VALUE NO-USER-MODIFICATION "
    "USAGE directoryOperation )",
    /* Replication state slapcat writes (OpenLDAP's OIDs): read and dropped at import. */
    "( 1.3.6.1.4.1.4203.666.1.7 NAME 'entryCSN' EQUALITY CSNMatch "
    "SYNTAX 1.3.6.1.4.1.4203.666.11.2.1{64} SINGLE-VALUE NO-USER-MODIFICATION "
    "USAGE directoryOperation )",
    "( 1.3.6.1.4.1.4203.666.1.25 NAME 'contextCSN' EQUALITY CSNMatch "
    "SYNTAX 1.3.6.1.4.1.4203.666.11.2.1{64} NO-USER-MODIFICATION USAGE dSAOperation )",
    "( 2.5.18.9 NAME 'hasSubordinates' EQUALITY booleanMatch "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.7 SINGLE-VALUE NO-USER-MODIFICATION "
    "USAGE directoryOperation )",
    "( 1.3.6.1.4.1.453.16.2.103 NAME 'numSubordinates' EQUALITY integerMatch "
    "ORDERING integerOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE "
    "NO-USER-MODIFICATION USAGE dSAOperation )",
    "( 2.5.18.10 NAME 'subschemaSubentry' EQUALITY distinguishedNameMatch "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.12 SINGLE-VALUE NO-USER-MODIFICATION "
    "USAGE directoryOperation )",
    /* As slapd's memberof overlay defines it; minidir-import computes it (storage/db.h). */
    "( 1.2.840.113556.1.2.102 NAME 'memberOf' DESC 'Group that the entry belongs to' "
    "EQUALITY distinguishedNameMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.12 "
    "NO-USER-MODIFICATION USAGE dSAOperation )",
    "( 1.3.6.1.1.20 NAME 'entryDN' EQUALITY distinguishedNameMatch "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.12 SINGLE-VALUE NO-USER-MODIFICATION "
    "USAGE directoryOperation )",
    "( 1.3.6.1.1.16.4 NAME 'entryUUID' EQUALITY UUIDMatch ORDERING UUIDOrderingMatch "
    "SYNTAX 1.3.6.1.1.16.1 SINGLE-VALUE NO-USER-MODIFICATION USAGE directoryOperation )",
    "( 2.5.21.5 NAME 'attributeTypes' EQUALITY objectIdentifierFirstComponentMatch "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.3 USAGE directoryOperation )",
    "( 2.5.21.6 NAME 'objectClasses' EQUALITY objectIdentifierFirstComponentMatch "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.37 USAGE directoryOperation )",
    "( 2.5.21.4 NAME 'matchingRules' EQUALITY objectIdentifierFirstComponentMatch "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.30 USAGE directoryOperation )",
    "( 1.3.6.1.4.1.1466.101.120.16 NAME 'ldapSyntaxes' EQUALITY "
    "objectIdentifierFirstComponentMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.54 "
    "USAGE directoryOperation )",
    "( 1.3.6.1.4.1.1466.101.120.5 NAME 'namingContexts' "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.12 USAGE dSAOperation )",
    "( 1.3.6.1.4.1.1466.101.120.13 NAME 'supportedControl' "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.38 USAGE dSAOperation )",
    "( 1.3.6.1.4.1.1466.101.120.7 NAME 'supportedExtension' "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.38 USAGE dSAOperation )",
    "( 1.3.6.1.4.1.4203.1.3.5 NAME 'supportedFeatures' EQUALITY objectIdentifierMatch "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.38 USAGE dSAOperation )",
    "( 1.3.6.1.4.1.1466.101.120.15 NAME 'supportedLDAPVersion' "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 USAGE dSAOperation )",
    "( 1.3.6.1.4.1.1466.101.120.14 NAME 'supportedSASLMechanisms' "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 USAGE dSAOperation )",
    "( 1.3.6.1.1.4 NAME 'vendorName' EQUALITY caseExactIA5Match "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.26 SINGLE-VALUE NO-USER-MODIFICATION "
    "USAGE dSAOperation )",
    "( 1.3.6.1.1.5 NAME 'vendorVersion' EQUALITY caseExactIA5Match "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.26 SINGLE-VALUE NO-USER-MODIFICATION "
    "USAGE dSAOperation )",
    /* Password policy (draft-behera-ldap-password-policy) as slapd 2.5's ppolicy overlay
     * builds it in, with its names and OIDs: the policy's settings (user attributes of a
     * pwdPolicy entry) and an account's state, which the provider writes and a replica or
     * an import keeps (storage/entry_opattrs.h) and a bind honours (server/ops/account.h). */
    "( 1.3.6.1.4.1.42.2.27.8.1.1 NAME 'pwdAttribute' EQUALITY objectIdentifierMatch "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.38 )",
    "( 1.3.6.1.4.1.42.2.27.8.1.2 NAME 'pwdMinAge' EQUALITY integerMatch ORDERING "
    "integerOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )",
    "( 1.3.6.1.4.1.42.2.27.8.1.3 NAME 'pwdMaxAge' EQUALITY integerMatch ORDERING "
    "integerOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )",
    "( 1.3.6.1.4.1.42.2.27.8.1.4 NAME 'pwdInHistory' EQUALITY integerMatch ORDERING "
    "integerOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )",
    "( 1.3.6.1.4.1.42.2.27.8.1.5 NAME 'pwdCheckQuality' EQUALITY integerMatch ORDERING "
    "integerOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )",
    "( 1.3.6.1.4.1.42.2.27.8.1.6 NAME 'pwdMinLength' EQUALITY integerMatch ORDERING "
    "integerOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )",
    "( 1.3.6.1.4.1.42.2.27.8.1.31 NAME 'pwdMaxLength' EQUALITY integerMatch SYNTAX "
    "1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )",
    "( 1.3.6.1.4.1.42.2.27.8.1.7 NAME 'pwdExpireWarning' EQUALITY integerMatch ORDERING "
    "integerOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )",
    "( 1.3.6.1.4.1.42.2.27.8.1.8 NAME 'pwdGraceAuthNLimit' EQUALITY integerMatch ORDERING "
    "integerOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )",
    "( 1.3.6.1.4.1.42.2.27.8.1.30 NAME 'pwdGraceExpiry' EQUALITY integerMatch SYNTAX "
    "1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )",
    "( 1.3.6.1.4.1.42.2.27.8.1.9 NAME 'pwdLockout' EQUALITY booleanMatch SYNTAX "
    "1.3.6.1.4.1.1466.115.121.1.7 SINGLE-VALUE )",
    "( 1.3.6.1.4.1.42.2.27.8.1.10 NAME 'pwdLockoutDuration' EQUALITY integerMatch "
    "ORDERING integerOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )",
    "( 1.3.6.1.4.1.42.2.27.8.1.11 NAME 'pwdMaxFailure' EQUALITY integerMatch ORDERING "
    "integerOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )",
    "( 1.3.6.1.4.1.42.2.27.8.1.12 NAME 'pwdFailureCountInterval' EQUALITY integerMatch "
    "ORDERING integerOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )",
    "( 1.3.6.1.4.1.42.2.27.8.1.13 NAME 'pwdMustChange' EQUALITY booleanMatch SYNTAX "
    "1.3.6.1.4.1.1466.115.121.1.7 SINGLE-VALUE )",
    "( 1.3.6.1.4.1.42.2.27.8.1.14 NAME 'pwdAllowUserChange' EQUALITY booleanMatch SYNTAX "
    "1.3.6.1.4.1.1466.115.121.1.7 SINGLE-VALUE )",
    "( 1.3.6.1.4.1.42.2.27.8.1.15 NAME 'pwdSafeModify' EQUALITY booleanMatch SYNTAX "
    "1.3.6.1.4.1.1466.115.121.1.7 SINGLE-VALUE )",
    "( 1.3.6.1.4.1.42.2.27.8.1.24 NAME 'pwdMinDelay' EQUALITY integerMatch SYNTAX "
    "1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )",
    "( 1.3.6.1.4.1.42.2.27.8.1.25 NAME 'pwdMaxDelay' EQUALITY integerMatch SYNTAX "
    "1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )",
    "( 1.3.6.1.4.1.42.2.27.8.1.26 NAME 'pwdMaxIdle' EQUALITY integerMatch SYNTAX "
    "1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )",
    "( 1.3.6.1.4.1.42.2.27.8.1.32 NAME 'pwdMaxRecordedFailure' EQUALITY integerMatch "
    "ORDERING integerOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )",
    "( 1.3.6.1.4.1.42.2.27.8.1.16 NAME 'pwdChangedTime' DESC 'when the password was "
    "changed last' EQUALITY generalizedTimeMatch ORDERING generalizedTimeOrderingMatch "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.24 SINGLE-VALUE NO-USER-MODIFICATION USAGE "
    "directoryOperation )",
    /* The identities an entry may act as by a SASL bind's authorization identity
     * (authz_policy = to), as slapd builds it in under OpenLDAP's experimental arc;
     * its rules are text here (slapd's own syntax and matching rule it alone has). */
    "( 1.3.6.1.4.1.4203.666.1.8 NAME ( 'authzTo' 'saslAuthzTo' ) DESC 'identities a "
    "SASL bind as this entry may act as' EQUALITY caseExactMatch SYNTAX "
    "1.3.6.1.4.1.1466.115.121.1.15 USAGE distributedOperation )",
    "( 1.3.6.1.4.1.42.2.27.8.1.17 NAME 'pwdAccountLockedTime' DESC 'when the account was "
    "locked' EQUALITY generalizedTimeMatch ORDERING generalizedTimeOrderingMatch SYNTAX "
    "1.3.6.1.4.1.1466.115.121.1.24 SINGLE-VALUE USAGE directoryOperation )",
    "( 1.3.6.1.4.1.42.2.27.8.1.19 NAME 'pwdFailureTime' DESC 'when the last failed binds "
    "in a row were made' EQUALITY generalizedTimeMatch ORDERING "
    "generalizedTimeOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.24 "
    "NO-USER-MODIFICATION USAGE directoryOperation )",
    "( 1.3.6.1.4.1.42.2.27.8.1.20 NAME 'pwdHistory' DESC 'earlier passwords, kept to "
    "refuse their reuse' EQUALITY octetStringMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.40 "
    "NO-USER-MODIFICATION USAGE directoryOperation )",
    "( 1.3.6.1.4.1.42.2.27.8.1.21 NAME 'pwdGraceUseTime' DESC 'when grace binds were made "
    "after the password expired' EQUALITY generalizedTimeMatch SYNTAX "
    "1.3.6.1.4.1.1466.115.121.1.24 NO-USER-MODIFICATION USAGE directoryOperation )",
    "( 1.3.6.1.4.1.42.2.27.8.1.22 NAME 'pwdReset' DESC 'the password was reset and must "
    "be changed' EQUALITY booleanMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.7 SINGLE-VALUE "
    "USAGE directoryOperation )",
    "( 1.3.6.1.4.1.42.2.27.8.1.23 NAME 'pwdPolicySubentry' DESC 'the policy that applies "
    "to this entry' EQUALITY distinguishedNameMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.12 "
    "SINGLE-VALUE USAGE directoryOperation )",
    "( 1.3.6.1.4.1.42.2.27.8.1.27 NAME 'pwdStartTime' DESC 'when the password starts to "
    "be valid' EQUALITY generalizedTimeMatch ORDERING generalizedTimeOrderingMatch SYNTAX "
    "1.3.6.1.4.1.1466.115.121.1.24 SINGLE-VALUE USAGE directoryOperation )",
    "( 1.3.6.1.4.1.42.2.27.8.1.28 NAME 'pwdEndTime' DESC 'when the password stops being "
    "valid' EQUALITY generalizedTimeMatch ORDERING generalizedTimeOrderingMatch SYNTAX "
    "1.3.6.1.4.1.1466.115.121.1.24 SINGLE-VALUE USAGE directoryOperation )",
    "( 1.3.6.1.4.1.42.2.27.8.1.29 NAME 'pwdLastSuccess' DESC 'when the last bind "
    "succeeded' EQUALITY generalizedTimeMatch ORDERING generalizedTimeOrderingMatch "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.24 SINGLE-VALUE NO-USER-MODIFICATION USAGE "
    "directoryOperation )",
    "( 1.3.6.1.4.1.42.2.27.8.1.33 NAME 'pwdAccountTmpLockoutEnd' DESC 'when a temporary "
    "lockout ends' EQUALITY generalizedTimeMatch ORDERING generalizedTimeOrderingMatch "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.24 SINGLE-VALUE NO-USER-MODIFICATION USAGE "
    "directoryOperation )",
    /* Account state other providers write, honoured at bind too: 389-ds's account
     * inactivation and lockout (USAGE as 389-ds defines them), Active Directory's account control
     * flags, lockout stamp (100 ns intervals since 1601) and its domain's lockout duration
     * (negative 100 ns intervals), AD's syntax "large integer" read as INTEGER. */
    "( 2.16.840.1.113730.3.1.610 NAME 'nsAccountLock' EQUALITY caseIgnoreMatch "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE USAGE directoryOperation )",
    "( 2.16.840.1.113730.3.1.95 NAME 'accountUnlockTime' EQUALITY generalizedTimeMatch "
    "ORDERING generalizedTimeOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.24 "
    "SINGLE-VALUE USAGE directoryOperation )",
    /* 389-ds's password expiry stamp and grace bind count (its syntaxes and USAGE). */
    "( 2.16.840.1.113730.3.1.91 NAME 'passwordExpirationTime' EQUALITY generalizedTimeMatch "
    "ORDERING generalizedTimeOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.24 "
    "SINGLE-VALUE USAGE directoryOperation )",
    "( 2.16.840.1.113730.3.1.998 NAME ( 'passwordGraceUserTime' 'pwdGraceUserTime' ) "
    "EQUALITY caseIgnoreMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE "
    "USAGE directoryOperation )",
    /* 389-ds's bookkeeping, sent for "+": its entry's unique ID (the Sync State's UUID),
     * database IDs and DN copies. Operational here so that a replica never stores them as
     * user attributes (server/replica/ds389.h). */
    "( 2.16.840.1.113730.3.1.542 NAME 'nsUniqueId' EQUALITY caseIgnoreMatch "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE NO-USER-MODIFICATION "
    "USAGE directoryOperation )",
    "( 2.16.840.1.113730.3.1.605 NAME 'entryid' EQUALITY caseIgnoreMatch "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE NO-USER-MODIFICATION "
    "USAGE directoryOperation )",
    "( 2.16.840.1.113730.3.1.604 NAME 'parentid' EQUALITY integerMatch "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE NO-USER-MODIFICATION "
    "USAGE directoryOperation )",
    "( 2.16.840.1.113730.3.1.2391 NAME 'dsEntryDN' EQUALITY distinguishedNameMatch "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.12 SINGLE-VALUE NO-USER-MODIFICATION "
    "USAGE directoryOperation )",
    "( 2.16.840.1.113730.3.1.545 NAME 'nscpEntryDN' EQUALITY distinguishedNameMatch "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.12 SINGLE-VALUE NO-USER-MODIFICATION "
    "USAGE directoryOperation )",
    "( 1.2.840.113556.1.4.8 NAME 'userAccountControl' EQUALITY integerMatch "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )",
    "( 1.2.840.113556.1.4.662 NAME 'lockoutTime' EQUALITY integerMatch "
    "ORDERING integerOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )",
    "( 1.2.840.113556.1.4.60 NAME 'lockoutDuration' EQUALITY integerMatch "
    "ORDERING integerOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )",
    /* slapd's back-monitor (cn=Monitor: server/monitor/monitor_slapd.c), under OpenLDAP's arc
     * 1.3.6.1.4.1.4203.666.1.55; slapd hides them from its cn=Subschema. All operational:
     * sent for "+" or by name, as slapd sends them. */
    "( 1.3.6.1.4.1.4203.666.1.55.1 NAME 'monitoredInfo' EQUALITY caseIgnoreMatch SUBSTR "
    "caseIgnoreSubstringsMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15{32768} NO-USER-MODIFICATION "
    "USAGE dSAOperation )",
    "( 1.3.6.1.4.1.4203.666.1.55.3 NAME 'monitorCounter' EQUALITY integerMatch ORDERING "
    "integerOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 NO-USER-MODIFICATION "
    "USAGE dSAOperation )",
    "( 1.3.6.1.4.1.4203.666.1.55.4 NAME 'monitorOpCompleted' SUP monitorCounter "
    "NO-USER-MODIFICATION "
    "USAGE dSAOperation )",
    "( 1.3.6.1.4.1.4203.666.1.55.5 NAME 'monitorOpInitiated' SUP monitorCounter "
    "NO-USER-MODIFICATION "
    "USAGE dSAOperation )",
    "( 1.3.6.1.4.1.4203.666.1.55.6 NAME 'monitorConnectionNumber' SUP monitorCounter "
    "NO-USER-MODIFICATION "
    "USAGE dSAOperation )",
    "( 1.3.6.1.4.1.4203.666.1.55.7 NAME 'monitorConnectionAuthzDN' EQUALITY distinguishedNameMatch "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.12 NO-USER-MODIFICATION "
    "USAGE dSAOperation )",
    "( 1.3.6.1.4.1.4203.666.1.55.8 NAME 'monitorConnectionLocalAddress' SUP monitoredInfo "
    "NO-USER-MODIFICATION "
    "USAGE dSAOperation )",
    "( 1.3.6.1.4.1.4203.666.1.55.9 NAME 'monitorConnectionPeerAddress' SUP monitoredInfo "
    "NO-USER-MODIFICATION "
    "USAGE dSAOperation )",
    "( 1.3.6.1.4.1.4203.666.1.55.10 NAME 'monitorTimestamp' EQUALITY generalizedTimeMatch ORDERING "
    "generalizedTimeOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.24 SINGLE-VALUE "
    "NO-USER-MODIFICATION "
    "USAGE dSAOperation )",
    "( 1.3.6.1.4.1.4203.666.1.55.12 NAME 'readOnly' EQUALITY booleanMatch SYNTAX "
    "1.3.6.1.4.1.1466.115.121.1.7 SINGLE-VALUE "
    "USAGE dSAOperation )",
    "( 1.3.6.1.4.1.4203.666.1.55.14 NAME 'monitorConnectionProtocol' SUP monitoredInfo "
    "NO-USER-MODIFICATION "
    "USAGE dSAOperation )",
    "( 1.3.6.1.4.1.4203.666.1.55.15 NAME 'monitorConnectionOpsReceived' SUP monitorCounter "
    "NO-USER-MODIFICATION "
    "USAGE dSAOperation )",
    "( 1.3.6.1.4.1.4203.666.1.55.16 NAME 'monitorConnectionOpsExecuting' SUP monitorCounter "
    "NO-USER-MODIFICATION "
    "USAGE dSAOperation )",
    "( 1.3.6.1.4.1.4203.666.1.55.17 NAME 'monitorConnectionOpsPending' SUP monitorCounter "
    "NO-USER-MODIFICATION "
    "USAGE dSAOperation )",
    "( 1.3.6.1.4.1.4203.666.1.55.18 NAME 'monitorConnectionOpsCompleted' SUP monitorCounter "
    "NO-USER-MODIFICATION "
    "USAGE dSAOperation )",
    "( 1.3.6.1.4.1.4203.666.1.55.19 NAME 'monitorConnectionGet' SUP monitorCounter "
    "NO-USER-MODIFICATION "
    "USAGE dSAOperation )",
    "( 1.3.6.1.4.1.4203.666.1.55.20 NAME 'monitorConnectionRead' SUP monitorCounter "
    "NO-USER-MODIFICATION "
    "USAGE dSAOperation )",
    "( 1.3.6.1.4.1.4203.666.1.55.21 NAME 'monitorConnectionWrite' SUP monitorCounter "
    "NO-USER-MODIFICATION "
    "USAGE dSAOperation )",
    "( 1.3.6.1.4.1.4203.666.1.55.22 NAME 'monitorConnectionMask' SUP monitoredInfo "
    "NO-USER-MODIFICATION "
    "USAGE dSAOperation )",
    "( 1.3.6.1.4.1.4203.666.1.55.23 NAME 'monitorConnectionListener' SUP monitoredInfo "
    "NO-USER-MODIFICATION "
    "USAGE dSAOperation )",
    "( 1.3.6.1.4.1.4203.666.1.55.24 NAME 'monitorConnectionPeerDomain' SUP monitoredInfo "
    "NO-USER-MODIFICATION "
    "USAGE dSAOperation )",
    "( 1.3.6.1.4.1.4203.666.1.55.25 NAME 'monitorConnectionStartTime' SUP monitorTimestamp "
    "SINGLE-VALUE NO-USER-MODIFICATION "
    "USAGE dSAOperation )",
    "( 1.3.6.1.4.1.4203.666.1.55.26 NAME 'monitorConnectionActivityTime' SUP monitorTimestamp "
    "SINGLE-VALUE NO-USER-MODIFICATION "
    "USAGE dSAOperation )",
    "( 1.3.6.1.4.1.4203.666.1.55.27 NAME 'monitorIsShadow' EQUALITY booleanMatch SYNTAX "
    "1.3.6.1.4.1.1466.115.121.1.7 SINGLE-VALUE "
    "USAGE dSAOperation )",
    /* The root DSE's pointer to cn=Monitor, as slapd defines it. */
    "( 1.3.6.1.4.1.4203.666.1.10 NAME 'monitorContext' EQUALITY distinguishedNameMatch "
    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.12 SINGLE-VALUE NO-USER-MODIFICATION USAGE dSAOperation )",
};

const char *const schema_builtin_classes[] = {
    "( 2.5.6.0 NAME 'top' ABSTRACT MUST objectClass )",
    "( 1.3.6.1.4.1.1466.101.120.111 NAME 'extensibleObject' SUP top AUXILIARY )",
    /* One string in two pieces (the parentheses tell clang it is meant). */
    ("( 2.5.20.1 NAME 'subschema' AUXILIARY MAY ( attributeTypes $ objectClasses $ "
     "matchingRules $ ldapSyntaxes ) )"),
    "( 2.5.6.1 NAME 'alias' SUP top STRUCTURAL MUST aliasedObjectName )",
    /* The password policy's class (draft-behera), slapd 2.5's ppolicy overlay's. */
    ("( 1.3.6.1.4.1.42.2.27.8.2.1 NAME 'pwdPolicy' SUP top AUXILIARY MUST pwdAttribute MAY "
     "( pwdMinAge $ pwdMaxAge $ pwdInHistory $ pwdCheckQuality $ pwdMinLength $ "
     "pwdMaxLength $ pwdExpireWarning $ pwdGraceAuthNLimit $ pwdGraceExpiry $ pwdLockout $ "
     "pwdLockoutDuration $ pwdMaxFailure $ pwdFailureCountInterval $ pwdMustChange $ "
     "pwdAllowUserChange $ pwdSafeModify $ pwdMinDelay $ pwdMaxDelay $ pwdMaxIdle $ "
     "pwdMaxRecordedFailure ) )"),
    /* back-monitor's classes (1.3.6.1.4.1.4203.666.3.16): monitor and its kinds. */
    ("( 1.3.6.1.4.1.4203.666.3.16.1 NAME 'monitor' SUP top STRUCTURAL MUST cn MAY ( "
     "description $ seeAlso $ labeledURI $ monitoredInfo ) )"),
    "( 1.3.6.1.4.1.4203.666.3.16.2 NAME 'monitorServer' SUP monitor STRUCTURAL )",
    "( 1.3.6.1.4.1.4203.666.3.16.3 NAME 'monitorContainer' SUP monitor STRUCTURAL )",
    "( 1.3.6.1.4.1.4203.666.3.16.4 NAME 'monitorCounterObject' SUP monitor STRUCTURAL )",
    "( 1.3.6.1.4.1.4203.666.3.16.5 NAME 'monitorOperation' SUP monitor STRUCTURAL )",
    "( 1.3.6.1.4.1.4203.666.3.16.6 NAME 'monitorConnection' SUP monitor STRUCTURAL )",
    "( 1.3.6.1.4.1.4203.666.3.16.8 NAME 'monitoredObject' SUP monitor STRUCTURAL )",
};

const size_t schema_builtin_nattrs = sizeof(schema_builtin_attrs) / sizeof(schema_builtin_attrs[0]);
const size_t schema_builtin_nclasses =
    sizeof(schema_builtin_classes) / sizeof(schema_builtin_classes[0]);
