-- wrk script: every request POSTs a new random situation of Penta to /api/advise (benchmarks/bench_serve.py).
-- Random dice (all alike now and then: the joker), rolls left 0 to 2, and a random sheet of valid points: each box
-- filled with a chance of one in two, never all thirteen, the Penta bonus where the Penta box holds 50.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

local upper = {"ones", "twos", "threes", "fours", "fives", "sixes"}
local fixed = {full_house = 25, small_straight = 30, large_straight = 40, penta = 50}

local function sum_of_dice()
  local s = 0
  for _ = 1, 5 do s = s + math.random(6) end
  return s
end

local function random_sheet()
  local items, filled = {}, 0
  local function put(box, points)
    if filled < 12 and math.random() < 0.5 then
      table.insert(items, string.format('"%s": %d', box, points))
      filled = filled + 1
      return true
    end
    return false
  end
  for face = 1, 6 do put(upper[face], face * math.random(0, 5)) end
  put("three_of_a_kind", math.random() < 0.3 and 0 or sum_of_dice())
  put("four_of_a_kind", math.random() < 0.5 and 0 or sum_of_dice())
  put("chance", sum_of_dice())
  for box, points in pairs(fixed) do
    local scored = math.random() < 0.6 and points or 0
    if put(box, scored) and box == "penta" and scored == 50 and filled >= 2 and math.random() < 0.2 then
      table.insert(items, '"penta_bonus": 100')
    end
  end
  return table.concat(items, ", ")
end

function init(args)
  math.randomseed(os.time() + math.floor(os.clock() * 1e6) + (tonumber(args[1]) or 0))
end

function request()
  local dice = {}
  for i = 1, 5 do dice[i] = math.random(6) end
  if math.random() < 0.02 then
    for i = 2, 5 do dice[i] = dice[1] end
  end
  local body = string.format('{"dice": [%s], "rolls_left": %d, "sheet": {%s}}',
    table.concat(dice, ", "), math.random(0, 2), random_sheet())
  return wrk.format(nil, nil, nil, body)
end
