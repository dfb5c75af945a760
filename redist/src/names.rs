//! Enums of options chosen by name on the command line (exchange methods, schedules, Thakur's
//! methods, receive modes): one macro gives each its names, `ALL`, `Display` and `FromStr`.

/// Declares a fieldless enum whose variants have a name (what `Display` prints and the first
/// name `FromStr` accepts) and aliases. Parsing ignores case, surrounding blanks, and takes
/// `-` for `_`; an unknown name is [`crate::RedistError::UnknownName`] listing the names.
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident ($what:literal) {
            $( $(#[$vmeta:meta])* $variant:ident = $primary:literal $(| $alias:literal)* ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every variant, for tests and sweeps.
            pub const ALL: [$name; [$($primary),+].len()] = [$($name::$variant),+];

            /// The name the command line uses.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $primary,)+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl std::str::FromStr for $name {
            type Err = $crate::error::RedistError;

            fn from_str(s: &str) -> $crate::error::Result<Self> {
                let key = s.trim().to_ascii_lowercase().replace('-', "_");
                $(
                    if key == $primary $(|| key == $alias)* {
                        return Ok($name::$variant);
                    }
                )+
                Err($crate::error::RedistError::UnknownName {
                    what: $what,
                    name: s.to_string(),
                    expected: [$($primary),+].join(", "),
                })
            }
        }
    };
}

pub(crate) use named_enum;
